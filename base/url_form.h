// application/x-www-form-urlencoded bodies and URL query strings (WHATWG URL's
// urlencoded parsing): the name=value pairs of LibreTranslate's and DeepL's forms and of a
// route's query. Over untrusted bytes; the decoded bytes are not checked for UTF-8 here.
#ifndef MTSERVE_BASE_URL_FORM_H_
#define MTSERVE_BASE_URL_FORM_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace mtserve {

// A name or value of a form: "+" is a space and %XX the byte XX (hexadecimal, either case); a
// "%" not followed by two hexadecimal digits stays as it is.
std::string FormDecode(absl::string_view text);

// The pairs of `text` ("a=1&b=2&a=3"), decoded, in order, repeated names kept; an empty pair
// ("a=1&&b") is skipped, and a pair without "=" is a name with an empty value.
std::vector<std::pair<std::string, std::string>> ParseUrlForm(absl::string_view text);

}  // namespace mtserve

#endif  // MTSERVE_BASE_URL_FORM_H_
