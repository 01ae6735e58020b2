// A Markdown document as md4c reads it, for tests that check a rendering makes the markup its
// source had and no more (text/markdown_document.h escapes translations): its blocks and inline
// spans (with raw inline HTML and hard breaks) as a string of nested events, and the text it
// shows. Header-only: unit tests and fuzz targets link md4c themselves.
#ifndef MTSERVE_TESTS_TEST_LIB_MARKDOWN_STRUCTURE_H_
#define MTSERVE_TESTS_TEST_LIB_MARKDOWN_STRUCTURE_H_

#include <md4c.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace mtserve {

struct MarkdownStructure {
  // "B<type>(" and ")" per block, "S<type>(" and ")" per span, "html" per raw inline HTML, "br"
  // per hard break (md4c's MD_BLOCKTYPE and MD_SPANTYPE numbers). Soft breaks are left out: a
  // translated paragraph is one line.
  std::string events;
  // The text of every text event (escapes resolved, ASCII numeric character references as their
  // characters, other entities as written), soft breaks as spaces.
  std::string text;
};

// `markdown` parsed with md4c, once, as text/markdown_document.cc parses it (GitHub's dialect).
inline MarkdownStructure ParseMarkdownStructureOnce(absl::string_view markdown) {
  MarkdownStructure out;
  MD_PARSER parser = {};
  parser.flags = MD_DIALECT_GITHUB;
  parser.enter_block = [](MD_BLOCKTYPE type, void*, void* o) {
    absl::StrAppend(&static_cast<MarkdownStructure*>(o)->events, "B", type, "(");
    return 0;
  };
  parser.leave_block = [](MD_BLOCKTYPE, void*, void* o) {
    static_cast<MarkdownStructure*>(o)->events += ")";
    return 0;
  };
  parser.enter_span = [](MD_SPANTYPE type, void*, void* o) {
    absl::StrAppend(&static_cast<MarkdownStructure*>(o)->events, "S", type, "(");
    return 0;
  };
  parser.leave_span = [](MD_SPANTYPE, void*, void* o) {
    static_cast<MarkdownStructure*>(o)->events += ")";
    return 0;
  };
  parser.text = [](MD_TEXTTYPE type, const MD_CHAR* text, MD_SIZE size, void* o) {
    MarkdownStructure& s = *static_cast<MarkdownStructure*>(o);
    if (type == MD_TEXT_HTML) {
      s.events += "html";
    } else if (type == MD_TEXT_BR) {
      s.events += "br";
    } else if (type == MD_TEXT_SOFTBR) {
      s.text += ' ';
    } else if (type == MD_TEXT_ENTITY && size > 3 && text[1] == '#') {
      // A numeric character reference: the character it shows (an ASCII one, as escaping writes).
      const bool hex = text[2] == 'x' || text[2] == 'X';
      const long code = std::strtol(std::string(text + (hex ? 3 : 2), size - (hex ? 4 : 3)).c_str(),
                                    nullptr, hex ? 16 : 10);
      if (code > 0 && code < 0x80) {
        s.text += static_cast<char>(code);
      } else {
        s.text.append(text, size);
      }
    } else {
      s.text.append(text, size);
    }
    return 0;
  };
  md_parse(markdown.data(), static_cast<MD_SIZE>(markdown.size()), &parser, &out);
  return out;
}

// `markdown` parsed with md4c as text/markdown_document.cc parses it, without md4c 0.4.8's
// dependence on byte offsets: its check that a list item began with two blank lines reads the
// last line of the block before them as if it were a block header, so that a list item's
// paragraph whose last line starts at an offset of 4 modulo 256, followed by two blank lines,
// ends the list where CommonMark (and md4c at any other offset) continues the item
// ("> - a\n>\n>\n>   b" ends it, "x\n> - a\n>\n>\n>   b" does not). A translation moves
// every line, so the document is read after 0, 1, 2... leading blank lines (which CommonMark
// ignores) until two readings agree: a line misleads md4c at one of 256 offsets, and lines that
// mislead it change different lists, so two readings that agree are the document's.
inline MarkdownStructure ParseMarkdownStructure(absl::string_view markdown) {
  std::vector<MarkdownStructure> readings;
  for (size_t blank_lines = 0;; ++blank_lines) {
    MarkdownStructure reading =
        ParseMarkdownStructureOnce(absl::StrCat(std::string(blank_lines, '\n'), markdown));
    for (const MarkdownStructure& earlier : readings) {
      if (earlier.events == reading.events && earlier.text == reading.text) return reading;
    }
    if (readings.size() == 8) return readings.front();
    readings.push_back(std::move(reading));
  }
}

}  // namespace mtserve

#endif  // MTSERVE_TESTS_TEST_LIB_MARKDOWN_STRUCTURE_H_
