// Parser of ptxas's `-v` report (ptxas_report.hpp).
#include "kernels/common/ptxas_report.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>

namespace gcb::kernels {

namespace {

std::string demangle(const std::string& mangled) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                                   std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

long number_before(const std::string& line, const std::regex& pattern) {
  std::smatch m;
  return std::regex_search(line, m, pattern) ? std::stol(m[1].str()) : 0;
}

}  // namespace

std::string kernel_display_name(std::string_view demangled) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";  // part of the name, not a parameter list
  std::string_view s = demangled;
  if (s.substr(0, 5) == "void ") s.remove_prefix(5);  // kernels return void
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.substr(i, kAnonymous.size()) == kAnonymous) {
      i += kAnonymous.size() - 1;
    } else if (s[i] == '<') {
      ++depth;
    } else if (s[i] == '>') {
      --depth;
    } else if (s[i] == '(' && depth == 0) {
      return std::string(s.substr(0, i));
    }
  }
  return std::string(s);
}

std::vector<KernelResources> parse_ptxas_report(std::string_view text) {
  static const std::regex entry(R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");

  std::vector<KernelResources> out;
  KernelResources current;
  bool open = false, properties_of_current = false;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      current = KernelResources{};
      current.mangled = m[1].str();
      current.arch = m[2].str();
      current.name = kernel_display_name(demangle(current.mangled));
      open = true;
      properties_of_current = false;
    } else if (std::regex_search(line, m, properties)) {
      properties_of_current = open && m[1].str() == current.mangled;
    } else if (std::regex_search(line, m, frame)) {
      if (properties_of_current) {
        current.stack_frame_bytes = std::stol(m[1].str());
        current.spill_store_bytes = std::stol(m[2].str());
        current.spill_load_bytes = std::stol(m[3].str());
      }
      properties_of_current = false;
    } else if (open && std::regex_search(line, m, used)) {
      current.registers = std::stoi(m[1].str());
      current.barriers = static_cast<int>(number_before(line, barriers));
      current.static_smem_bytes = number_before(line, smem);
      out.push_back(current);
      open = false;
    }
  }
  return out;
}

}  // namespace gcb::kernels
