import Foundation

/// The bytes of a file the configuration names (config.json, the exchange-rate file, a secret's file), read up to
/// a bound: a file that grows without one (a rate feed gone wrong, a device named by mistake) is refused, not read
/// whole into memory (a 3 GB rate file took 3 GB, and the server reads that file again beside its sales).
enum ConfigurationFile {
    enum Failure: Error, Equatable {
        case unreadable
        case larger(than: Int)
    }

    /// config.json and the exchange-rate file: years of daily rates for every currency fit many times over.
    static let textLimit = 64 << 20
    /// A secret's file holds one line.
    static let secretLimit = 64 << 10

    static func contents(atPath path: String, limit: Int) -> Result<Data, Failure> {
        guard let handle = FileHandle(forReadingAtPath: path) else { return .failure(.unreadable) }
        defer { try? handle.close() }
        let read: Data?
        do {
            read = try handle.read(upToCount: limit + 1)
        } catch {
            return .failure(.unreadable)  // a folder, say
        }
        // An empty file reads as nil.
        guard let data = read else { return .success(Data()) }
        return data.count > limit ? .failure(.larger(than: limit)) : .success(data)
    }

    /// The failure in words for a configuration error about `path`.
    static func problem(_ failure: Failure, path: String) -> String {
        switch failure {
        case .unreadable: "cannot read \(path)"
        case .larger(let limit): "\(path) is larger than \(limit >> 10) KiB: not a file linkout reads"
        }
    }
}
