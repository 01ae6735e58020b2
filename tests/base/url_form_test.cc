// base/url_form: form-encoded pairs decoded as browsers and clients encode them.
#include "base/url_form.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(UrlFormTest, DecodesPlusAndPercentEscapesOfEitherCase) {
  EXPECT_EQ(FormDecode("a+b%21%c3%A9"), "a b!\xc3\xa9");
  // A '%' without two hexadecimal digits after it stays as it is.
  EXPECT_EQ(FormDecode("100%"), "100%");
  EXPECT_EQ(FormDecode("%4"), "%4");
  EXPECT_EQ(FormDecode("%zz"), "%zz");
  EXPECT_EQ(FormDecode("%00"), std::string(1, '\0'));
}

TEST(UrlFormTest, PairsInOrderWithRepeatedNamesKept) {
  EXPECT_EQ(ParseUrlForm("text=a&text=b+c&target_lang=DE"),
            (Pairs{{"text", "a"}, {"text", "b c"}, {"target_lang", "DE"}}));
  // Empty pairs are skipped; a name without '=' has an empty value; '=' in a value stays.
  EXPECT_EQ(ParseUrlForm("&a&&b=x=y&"), (Pairs{{"a", ""}, {"b", "x=y"}}));
  EXPECT_EQ(ParseUrlForm(""), Pairs{});
  EXPECT_EQ(ParseUrlForm("n%61me=v%26"), (Pairs{{"name", "v&"}}));
}

}  // namespace
}  // namespace mtserve
