// The printer: the one canonical text form of a module. Every result type is
// written, attributes equal to their defaults are left out and the rest are
// sorted by name; unnamed values get numbers that collide with no name.
// Parsing the output gives the same module back.
#ifndef HGC_IR_PRINTER_H_
#define HGC_IR_PRINTER_H_

#include <string>

#include "ir/graph.h"

namespace hgc {

std::string PrintModule(const Module& module);
std::string PrintGraph(const Graph& graph);

}  // namespace hgc

#endif  // HGC_IR_PRINTER_H_
