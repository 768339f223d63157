/// A storage failure: SQLite's code and message, or a problem with the data folder.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "StorageError(\(code)): \(message)" }
}
