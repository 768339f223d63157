/// Why a QR Code could not be made.
enum QRCodeError: Error, Equatable, CustomStringConvertible {
    /// More bytes than the largest allowed version holds at the requested level.
    case tooLong(byteCount: Int, capacity: Int)
    /// A forced version outside 1...40.
    case invalidVersion(Int)
    /// A forced mask pattern reference outside 0...7.
    case invalidMask(Int)

    var description: String {
        switch self {
        case .tooLong(let byteCount, let capacity):
            "\(byteCount) bytes do not fit in a QR Code that holds at most \(capacity) bytes at this level"
        case .invalidVersion(let version): "QR Code version \(version) does not exist (1 to 40)"
        case .invalidMask(let mask): "QR Code mask pattern \(mask) does not exist (0 to 7)"
        }
    }
}
