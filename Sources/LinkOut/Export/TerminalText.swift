import Domain

/// Text from outside (Apple's messages, a path an operator typed, an event id a provider sent) as the text
/// outputs of the commands print it: one line of visible characters. A line break in it forged a whole line of
/// `linkout audit` (an entry that was never made), and an escape sequence reached the operator's terminal; every
/// control character, and the Unicode ones that reorder or break lines, is written as an escape instead. The JSON
/// output quotes its values and keeps them as they are; the CSV keeps line breaks and tabs (`LedgerCSV.quote`).
package enum TerminalText {
    /// `text` with every hidden character but those `kept` written as an escape.
    package static func visible(_ text: String, keeping kept: Set<Unicode.Scalar> = []) -> String {
        let escaped = { (scalar: Unicode.Scalar) in HiddenCharacters.contains(scalar) && !kept.contains(scalar) }
        guard text.unicodeScalars.contains(where: escaped) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case _ where kept.contains(scalar): out.unicodeScalars.append(scalar)
            // Escaped too, once anything is: a backslash written as it is would read as the start of an escape.
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where HiddenCharacters.contains(scalar): out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
