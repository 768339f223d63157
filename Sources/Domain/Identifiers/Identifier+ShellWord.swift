extension Identifier {
    /// The id as one word of a shell command line, for the commands linkout suggests (`linkout report retract …`):
    /// as it is when it holds only characters no shell reads specially, else in single quotes. A line item id
    /// comes from the backend API and may hold `;` or `$(…)`: pasted bare, the operator's shell ran it.
    public var shellWord: String {
        let plain =
            !rawValue.isEmpty
            && rawValue.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: "-_.:/@%+=,".utf8.contains(byte)
                }
            }
        // A word that starts with `=` is a command's path to zsh (`=ls`).
        guard !plain || rawValue.hasPrefix("=") else { return rawValue }
        // Nothing is special inside single quotes but the quote itself, written as quote, escaped quote, quote.
        return "'" + rawValue.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }
}
