import ExternalPurchase
package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The bytes of a file the configuration or a command names (config.json, the exchange-rate file, a secret's
/// file, a line item to restate), read up to a bound: a file that grows without one (a rate feed gone wrong, a
/// device named by mistake) is refused, not read whole into memory (a 3 GB rate file took 3 GB, and the server
/// reads that file again beside its sales). Any readable file is taken (a pipe such as `<(jq …)` too).
package enum ConfigurationFile {
    package enum Failure: Error, Equatable {
        case missing
        case unreadable
        case larger(than: Int)
        /// A pipe with nothing in it and nothing writing to it (a named pipe no process opened for writing).
        case pipeWithoutWriter
        /// Symbolic links that lead back to themselves (it read as "there is no such file").
        case symbolicLinkLoop
    }

    /// config.json and the exchange-rate file: years of daily rates for every currency fit many times over.
    package static let textLimit = 64 << 20
    /// A secret's file holds one line.
    package static let secretLimit = 64 << 10

    package static func contents(atPath path: String, limit: Int) -> Result<Data, Failure> {
        // Opened without waiting: a named pipe's open waits for a writer, and one nothing wrote to (a secret's
        // mount gone wrong) held `serve` and `check` before their first line, for good. Then read waiting, as
        // a pipe whose writer is slow (`<(jq …)`) needs; one without a writer reads as its end at once.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ELOOP { return .failure(.symbolicLinkLoop) }
            return .failure(FileManager.default.fileExists(atPath: path) ? .unreadable : .missing)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        defer { try? handle.close() }
        var status = stat()
        guard fstat(descriptor, &status) == 0, fcntl(descriptor, F_SETFL, O_RDONLY) == 0 else {
            return .failure(.unreadable)
        }
        let isPipe = (status.st_mode & S_IFMT) == S_IFIFO
        let read: Data?
        do {
            read = try handle.read(upToCount: limit + 1)
        } catch {
            return .failure(.unreadable)  // a folder, say
        }
        // An empty file reads as nil.
        guard let data = read else { return isPipe ? .failure(.pipeWithoutWriter) : .success(Data()) }
        return data.count > limit ? .failure(.larger(than: limit)) : .success(data)
    }

    /// The file's bytes, or the configuration error naming `field` and what is wrong with the file.
    static func read(_ path: String, limit: Int, field: String) throws(ConfigurationError) -> Data {
        switch contents(atPath: path, limit: limit) {
        case .success(let data): return data
        case .failure(let failure): throw ConfigurationError(field: field, problem: problem(failure, path: path))
        }
    }

    /// The JSON text of a file the operator writes, as the checks after parsing read it
    /// (`TokenDecoder.utf8JSONText`: a leading byte order mark, which some editors write, read past): the check
    /// for a key named twice reads UTF-8, and a UTF-16 file carried a repeated setting past it.
    static func jsonText(_ data: Data, field: String) throws(ConfigurationError) -> Data {
        guard let text = TokenDecoder.utf8JSONText(Array(data)) else {
            throw ConfigurationError(
                field: field,
                problem: "is not UTF-8 text (UTF-16, UTF-32, Latin-1?): save it as UTF-8"
            )
        }
        return Data(text)
    }

    /// The failure in words, naming `path`.
    package static func problem(_ failure: Failure, path: String) -> String {
        switch failure {
        case .missing: "cannot read \(path): there is no such file"
        case .unreadable: "cannot read \(path): not a readable file"
        case .larger(let limit): "\(path) is larger than \(size(limit)): not a file linkout reads"
        case .pipeWithoutWriter: "cannot read \(path): an empty pipe with no writer when it was read"
        case .symbolicLinkLoop: "cannot read \(path): its symbolic links lead back to themselves"
        }
    }

    private static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }
}
