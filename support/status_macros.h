// Status propagation helpers. Abseil 20220623 ships none, so hgc defines the
// two every Status-returning function needs.
#ifndef HGC_SUPPORT_STATUS_MACROS_H_
#define HGC_SUPPORT_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HGC_STATUS_CONCAT_INNER_(a, b) a##b
#define HGC_STATUS_CONCAT_(a, b) HGC_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the current function
// if it is not OK.
#define HGC_RETURN_IF_ERROR(expr)                \
  do {                                           \
    ::absl::Status hgc_status_ = (expr);         \
    if (!hgc_status_.ok()) return hgc_status_;   \
  } while (0)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status, else
// moves the value into `lhs` (which may be a declaration).
#define HGC_ASSIGN_OR_RETURN(lhs, rexpr) \
  HGC_ASSIGN_OR_RETURN_IMPL_(            \
      HGC_STATUS_CONCAT_(hgc_statusor_, __LINE__), lhs, rexpr)

#define HGC_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                               \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // HGC_SUPPORT_STATUS_MACROS_H_
