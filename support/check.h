// HGC_CHECK: aborts with file:line and a message on a broken invariant.
// Only for programmer errors; nothing a user writes may reach one (input
// errors are absl::Status values).
#ifndef HGC_SUPPORT_CHECK_H_
#define HGC_SUPPORT_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define HGC_CHECK(cond)                                                   \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: internal check failed: %s\n", __FILE__, \
                   __LINE__, #cond);                                      \
      std::abort();                                                       \
    }                                                                     \
  } while (0)

#endif  // HGC_SUPPORT_CHECK_H_
