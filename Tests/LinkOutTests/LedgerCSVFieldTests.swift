import Testing

@testable import LinkOut

/// A CSV field from outside (a provider's product id, a reason naming its subscription) is written so neither a
/// spreadsheet nor a terminal runs it.
@Suite("CSV fields")
struct LedgerCSVFieldTests {
    @Test func formulasAreDefusedAndEscapeSequencesWrittenAsEscapes() {
        #expect(LedgerCSV.quote("=HYPERLINK(\"x\")") == "\"'=HYPERLINK(\"\"x\"\")\"")
        #expect(LedgerCSV.quote("@SUM(1)") == "'@SUM(1)")
        // A leading tab or carriage return too (OWASP's list): they slipped past.
        #expect(LedgerCSV.quote("\t=1+1") == "'\t=1+1")
        #expect(LedgerCSV.quote("\r=1+1") == "\"'\r=1+1\"")
        // A number stays a number.
        #expect(LedgerCSV.quote("-2999") == "-2999")
        // An escape sequence retitled the window and recoloured the text of `linkout export --format csv`.
        #expect(LedgerCSV.quote("\u{1b}]0;PWNED\u{7}\u{1b}[31mRED") == #"\u{1b}]0;PWNED\u{7}\u{1b}[31mRED"#)
        #expect(LedgerCSV.quote("pro\u{202E}txt") == #"pro\u{202e}txt"#)
        // Line breaks and commas are quoted as RFC 4180 says, and kept.
        #expect(LedgerCSV.quote("a,b\nc") == "\"a,b\nc\"")
        // A carriage return and line feed are one Swift character, and went out unquoted, a formula after them.
        #expect(LedgerCSV.quote("x\r\n=cmd") == "\"x\r\n=cmd\"")
        #expect(LedgerCSV.quote("\r\n=1+1") == "\"'\r\n=1+1\"")
        #expect(LedgerCSV.quote("a\\u{1b}\u{1b}") == #"a\\u{1b}\u{1b}"#)
        #expect(LedgerCSV.quote("pro.lifetime") == "pro.lifetime")
    }
}
