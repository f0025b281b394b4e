// vld-man-parameters: makes nbdkit-vld-plugin.pod from its template and the
// parameter table (plugin/parameters.h), at build time.
//
//   vld-man-parameters TEMPLATE.pod OUTPUT.pod VERSION
//
// The template's paragraph "=for vld-parameters" becomes the PARAMETERS
// section's items, grouped under =head2 headings; "@VLD_VERSION@" becomes
// VERSION. Exits 1 (writing nothing) if the template has no such paragraph,
// or has it twice, or if the table repeats a key.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "plugin/parameters.h"

namespace {

using namespace vld;

std::string item(const ParameterDoc& p) {
  std::string value = p.man_value ? p.man_value : p.value;
  std::string key = std::string("B<") + p.key + "=>";
  return "=item " + (p.magic ? "[" + key + "]" : key) + value + "\n\n" + p.pod + "\n\n";
}

std::string parameters_pod() {
  std::string out;
  bool first = true;
  ParameterGroup group{};
  for (const ParameterDoc& p : kParameters) {
    if (first || p.group != group) {
      if (!first) out += "=back\n\n";
      out += std::string("=head2 ") + group_heading(p.group) + "\n\n";
      if (*group_intro(p.group)) out += std::string(group_intro(p.group)) + "\n\n";
      out += "=over 4\n\n";
      group = p.group;
      first = false;
    }
    out += item(p);
  }
  return out + "=back\n";
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: vld-man-parameters TEMPLATE.pod OUTPUT.pod VERSION\n";
    return 2;
  }
  std::set<std::string> keys;
  for (const ParameterDoc& p : kParameters)
    if (!keys.insert(p.key).second) {
      std::cerr << "vld-man-parameters: parameter " << p.key << "= is in the table twice\n";
      return 1;
    }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "vld-man-parameters: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string marker = "\n=for vld-parameters\n";
  const size_t at = text.find(marker);
  if (at == std::string::npos || text.find(marker, at + 1) != std::string::npos) {
    std::cerr << "vld-man-parameters: " << argv[1]
              << " must have exactly one paragraph \"=for vld-parameters\"\n";
    return 1;
  }
  text.replace(at + 1, marker.size() - 1, parameters_pod());
  replace_all(text, "@VLD_VERSION@", argv[3]);

  const std::string tmp = std::string(argv[2]) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) {
      std::cerr << "vld-man-parameters: cannot write " << tmp << "\n";
      return 1;
    }
  }
  if (std::rename(tmp.c_str(), argv[2]) != 0) {
    std::perror(argv[2]);
    return 1;
  }
  return 0;
}
