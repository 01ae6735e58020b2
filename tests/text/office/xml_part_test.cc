// An office package's XML parts read safely and written back (text/office/xml_part.h): DOCTYPEs
// (entity expansion, external entities), encodings other than UTF-8 and deep nesting refused,
// naming the part; what the parser keeps (declaration, processing instructions, whitespace-only
// text) written back; a real document.xml (python3-docx) parsed again to the same tree.
#include "text/office/xml_part.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/test_lib/request_thread_stack.h"
#include "text/office/office_package.h"

namespace mtserve {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

absl::Status ParseStatus(absl::string_view bytes, const XmlLimits& limits = {}) {
  return ParseXmlPart("word/document.xml", bytes, limits).status();
}

std::string RoundTrip(absl::string_view bytes) {
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> document = ParseXmlPart("content.xml", bytes);
  EXPECT_TRUE(document.ok()) << document.status();
  return document.ok() ? WriteXmlPart(**document) : "";
}

// Whether two trees hold the same nodes: types, names, values and attributes, in order.
void ExpectSameTree(const pugi::xml_node& a, const pugi::xml_node& b, int* nodes) {
  ++*nodes;
  ASSERT_EQ(a.type(), b.type());
  ASSERT_STREQ(a.name(), b.name());
  ASSERT_STREQ(a.value(), b.value());
  pugi::xml_attribute x = a.first_attribute(), y = b.first_attribute();
  for (; x && y; x = x.next_attribute(), y = y.next_attribute()) {
    ASSERT_STREQ(x.name(), y.name());
    ASSERT_STREQ(x.value(), y.value());
  }
  ASSERT_EQ(!x, !y) << a.name();
  pugi::xml_node c = a.first_child(), d = b.first_child();
  for (; c && d; c = c.next_sibling(), d = d.next_sibling()) ExpectSameTree(c, d, nodes);
  ASSERT_EQ(!c, !d) << a.name();
}

TEST(XmlPartTest, RefusesADoctypeWithInternalEntities) {
  const std::string laughs =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n"
      " <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
      " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
      "]>\n<lolz>&lol3;</lolz>";
  const absl::Status status = ParseStatus(laughs);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(),
            "part word/document.xml: a DOCTYPE is not accepted: entities are never expanded");
}

TEST(XmlPartTest, RefusesAnExternalEntity) {
  const absl::Status status =
      ParseStatus("<!DOCTYPE a [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><a>&x;</a>");
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(std::string(status.message()), HasSubstr("a DOCTYPE is not accepted"));
  EXPECT_THAT(
      std::string(ParseStatus("<!DOCTYPE a SYSTEM \"http://example.com/a.dtd\"><a/>").message()),
      HasSubstr("a DOCTYPE is not accepted"));
  // Nor one after the root element, nor one inside it.
  EXPECT_THAT(std::string(ParseStatus("<a/><!DOCTYPE a>").message()),
              HasSubstr("word/document.xml"));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseStatus("<a><!DOCTYPE a></a>")));
}

TEST(XmlPartTest, LeavesAnUndeclaredEntityUnexpanded) {
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> document =
      ParseXmlPart("content.xml", "<a>&x;&amp;&#65;</a>");
  ASSERT_TRUE(document.ok()) << document.status();
  EXPECT_STREQ((*document)->child("a").text().get(), "&x;&A");
}

TEST(XmlPartTest, RefusesEncodingsOtherThanUtf8) {
  const absl::Status bom = ParseStatus("\xFF\xFE<\0a\0/\0>\0");
  EXPECT_TRUE(absl::IsInvalidArgument(bom));
  EXPECT_EQ(bom.message(), "part word/document.xml: UTF-16 is not accepted: parts must be UTF-8");
  EXPECT_TRUE(absl::IsInvalidArgument(ParseStatus("\xFE\xFF\0<\0a\0/\0>")));
  // UTF-16 without a byte order mark is not well-formed UTF-8 XML.
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseStatus(std::string("<\0?\0x\0m\0l\0 \0v\0=\0\"\0\x31\0\"\0?\0>\0<\0a\0/\0>\0", 28))));
  const absl::Status latin1 =
      ParseStatus("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>caf\xE9</a>");
  EXPECT_TRUE(absl::IsInvalidArgument(latin1));
  EXPECT_EQ(latin1.message(),
            "part word/document.xml: encoding \"ISO-8859-1\" is not accepted: parts must be UTF-8");
  EXPECT_TRUE(ParseStatus("<?xml version=\"1.0\" encoding=\"utf-8\"?><a/>").ok());
  EXPECT_TRUE(ParseStatus("\xEF\xBB\xBF<?xml version='1.0' encoding='UTF-8'?><a/>").ok());
}

TEST(XmlPartTest, BoundsNesting) {
  auto nested = [](int depth) {
    std::string xml;
    for (int i = 0; i < depth; ++i) xml += "<w:p>";
    xml += "text";
    for (int i = 0; i < depth; ++i) xml += "</w:p>";
    return xml;
  };
  EXPECT_TRUE(ParseStatus(nested(256)).ok());
  const absl::Status deep = ParseStatus(nested(257));
  EXPECT_TRUE(absl::IsInvalidArgument(deep));
  EXPECT_EQ(deep.message(), "part word/document.xml: elements nest deeper than 256");
  XmlLimits shallow;
  shallow.max_depth = 3;
  EXPECT_TRUE(ParseStatus("<a><b><c/></b><b><c>x</c></b></a>", shallow).ok());
  EXPECT_FALSE(ParseStatus("<a><b><c/></b><b><c><d/></c></b></a>", shallow).ok());
  // Siblings do not add depth.
  std::string wide = "<a>";
  for (int i = 0; i < 10000; ++i) wide += "<b>x</b>";
  EXPECT_TRUE(ParseStatus(wide + "</a>", shallow).ok());
  // A million levels cost no stack (the parse, the walk and the document's destruction are not
  // recursive): refused on a server request thread's stack.
  const std::string million = nested(1000000);
  absl::Status status;
  RunOnRequestThreadStack([&] { status = ParseStatus(million); });
  EXPECT_EQ(status.message(), "part word/document.xml: elements nest deeper than 256");
}

TEST(XmlPartTest, BoundsMarkupBeforeParsing) {
  XmlLimits few;
  few.max_markup = 6;
  // Three elements and a comment: six "<" (start and end tags, the comment), the limit.
  EXPECT_TRUE(ParseStatus("<a><b/><!-- c --><c>x</c></a>", few).ok());
  const absl::Status many = ParseStatus("<a><b/><!-- c --><c>x</c><d/></a>", few);
  EXPECT_TRUE(absl::IsInvalidArgument(many));
  EXPECT_EQ(many.message(),
            "part word/document.xml: more than 6 elements, comments and other markup (the limit "
            "on one part's markup)");
  // The default takes a part of 900,000 small paragraphs (about 11 MB of XML).
  std::string big = "<w:body>";
  for (int i = 0; i < 900000; ++i) big += "<w:p>x</w:p>";
  EXPECT_TRUE(ParseStatus(big + "</w:body>").ok());
}

TEST(XmlPartTest, GivesTheOffsetOfMalformedXml) {
  const std::string bad = "<a><b>text</a>";
  const absl::Status status = ParseStatus(bad);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(std::string(status.message()),
              StartsWith("part word/document.xml: malformed XML at byte "));
  // The offset points into the mismatched end tag.
  const size_t at = std::stoul(std::string(status.message().substr(
      std::string("part word/document.xml: malformed XML at byte ").size())));
  EXPECT_GE(at, bad.find("</a>"));
  EXPECT_LE(at, bad.size());
  EXPECT_THAT(std::string(ParseStatus("").message()), HasSubstr("malformed XML"));
  EXPECT_THAT(std::string(ParseStatus("<a attr=\"x></a>").message()),
              HasSubstr("malformed XML at byte"));
}

TEST(XmlPartTest, KeepsWhitespaceDeclarationAndProcessingInstructions) {
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
      "<?mso-application progid=\"Word.Document\"?>"
      "<w:document xmlns:w=\"urn:w\"><w:p><w:r><w:t>a</w:t></w:r> <w:r><w:t xml:space=\"preserve\">"
      "  b  </w:t></w:r>\n\t<!-- note --><![CDATA[<raw>]]></w:p></w:document>";
  EXPECT_EQ(RoundTrip(xml), xml);
}

TEST(XmlPartTest, KeepsCarriageReturns) {
  // A CR from a character reference reads back as a CR, and literal CR LF line ends are kept.
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> document =
      ParseXmlPart("content.xml", "<a b=\"x&#13;y\">t&#13;u</a>");
  ASSERT_TRUE(document.ok()) << document.status();
  EXPECT_STREQ((*document)->child("a").text().get(), "t\ru");
  const std::string written = WriteXmlPart(**document);
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> again = ParseXmlPart("content.xml", written);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_STREQ((*again)->child("a").text().get(), "t\ru");
  EXPECT_STREQ((*again)->child("a").attribute("b").value(), "x\ry");
  const std::string crlf = "<a>\r\n  <b>line one\r\nline two</b>\r\n</a>";
  EXPECT_EQ(RoundTrip(crlf), crlf);
}

TEST(XmlPartTest, EscapesWhatItWrites) {
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> document =
      ParseXmlPart("content.xml", "<a b=\"1 &amp; &quot;2&quot;\">x &lt; y &amp; z</a>");
  ASSERT_TRUE(document.ok()) << document.status();
  (*document)->child("a").text().set("<&>\"");
  const std::string written = WriteXmlPart(**document);
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> again = ParseXmlPart("content.xml", written);
  ASSERT_TRUE(again.ok()) << again.status() << written;
  EXPECT_STREQ((*again)->child("a").text().get(), "<&>\"");
  EXPECT_STREQ((*again)->child("a").attribute("b").value(), "1 & \"2\"");
}

TEST(XmlPartTest, RoundTripsARealDocument) {
  std::ifstream in(std::string(MTSERVE_TEST_DATA_DIR) + "/office/simple.docx", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  absl::StatusOr<OfficePackage> package = OfficePackage::Open(bytes.str());
  ASSERT_TRUE(package.ok()) << package.status();
  for (const std::string part : {"word/document.xml", "word/styles.xml", "word/header1.xml"}) {
    SCOPED_TRACE(part);
    absl::StatusOr<std::string> xml = package->Read(part);
    ASSERT_TRUE(xml.ok()) << xml.status();
    absl::StatusOr<std::unique_ptr<pugi::xml_document>> first = ParseXmlPart(part, *xml);
    ASSERT_TRUE(first.ok()) << first.status();
    const std::string written = WriteXmlPart(**first);
    absl::StatusOr<std::unique_ptr<pugi::xml_document>> second = ParseXmlPart(part, written);
    ASSERT_TRUE(second.ok()) << second.status();
    int nodes = 0;
    ExpectSameTree(**first, **second, &nodes);
    EXPECT_GT(nodes, 5);
    EXPECT_THAT(written,
                StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"));
  }
  // The body's text is there once parsed.
  absl::StatusOr<std::unique_ptr<pugi::xml_document>> document =
      ParseXmlPart("word/document.xml", *package->Read("word/document.xml"));
  ASSERT_TRUE(document.ok());
  std::string text;
  for (pugi::xpath_node t : (*document)->select_nodes("//w:t")) text += t.node().text().get();
  EXPECT_THAT(text, HasSubstr("The weather was very cold, and the river froze."));
}

}  // namespace
}  // namespace mtserve
