// One escaping helper per output format (reports/escape.hpp): crafted names stay text in
// Markdown, XML/HTML, DOT, mermaid and CSV.
#include "reports/escape.hpp"

#include <gtest/gtest.h>

namespace gcb {
namespace {

const std::string kScript = "<script>alert(1)</script>";
const std::string kImg = "<img src=x onerror=alert(1)>";

TEST(Escape, XmlLeavesNoTagAndNoControlCharacter) {
  EXPECT_EQ(xml_escape(kScript), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(xml_escape("<a & 'b' \"c\">"), "&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;");
  EXPECT_EQ(xml_escape("plain ×—"), "plain ×—");
  EXPECT_EQ(xml_escape(std::string("a\0b\x1b"
                                   "c\td\n",
                                   8)),
            "a b c\td\n");
}

TEST(Escape, MarkdownTextOpensNoTagLinkCodeOrCell) {
  EXPECT_EQ(markdown_text(kImg), "\\<img src=x onerror=alert(1)\\>");
  EXPECT_EQ(markdown_text("[x](javascript:alert(1))"), "\\[x\\](javascript:alert(1))");
  EXPECT_EQ(markdown_text("a|b\nc`d\\"), "a\\|b c\\`d\\\\");
  EXPECT_EQ(markdown_text("coll/all_reduce dtype=float"), "coll/all_reduce dtype=float");
  EXPECT_EQ(markdown_code("a`b|c\nd"), "a'b\\|c d");
  EXPECT_EQ(markdown_fenced("```\nx"), "'''\nx");
}

TEST(Escape, DotAndMermaidLabelsCannotEndEarly) {
  EXPECT_EQ(dot_label("GPU\"]; evil [label=\"x"), "GPU\\\"]; evil [label=\\\"x");
  EXPECT_EQ(dot_label("a\\b\nc"), "a\\\\b c");
  EXPECT_EQ(mermaid_label("H100\"] --> X[\"" + kScript),
            "H100#quot;] --#gt; X[#quot;#lt;script#gt;alert(1)#lt;/script#gt;");
  EXPECT_EQ(mermaid_label("#1 & 2"), "#35;1 #amp; 2");
}

TEST(Escape, CsvFieldsQuoteAndNeverRunAsFormulas) {
  EXPECT_EQ(csv_field("=HYPERLINK(\"http://x\",\"y\")"), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  EXPECT_EQ(csv_field("+1+cmd"), "'+1+cmd");
  EXPECT_EQ(csv_field("-2+3"), "'-2+3");
  EXPECT_EQ(csv_field("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(csv_field("\tx"), "'\tx");
  // Plain numbers and ordinary text stay as they are.
  EXPECT_EQ(csv_field("-1.5"), "-1.5");
  EXPECT_EQ(csv_field("+3e9"), "+3e9");
  EXPECT_EQ(csv_field("mem/host/copy"), "mem/host/copy");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
}

}  // namespace
}  // namespace gcb
