import Domain
import Outbound

extension Configuration {
    /// The files of extra trusted certificates the server's calls read (`apple.caFile`, the chosen provider's
    /// `caFile`), by field.
    var trustedCAFiles: [(field: String, path: String)] {
        var files: [(field: String, path: String)] = []
        if let path = apple.caFile { files.append(("apple.caFile", path)) }
        if let path = payments[payments.provider, "caFile"], !path.isEmpty {
            files.append(("payments.\(payments.provider.rawValue).caFile", path))
        }
        return files
    }

    /// Each file named is one libcurl can read (`TrustedCAFile`): one missing failed every call to that service
    /// much later, as a TLS error. Checked by `serve` and `check`, not whenever a command reads the
    /// configuration: a backup, or a restore on another host, calls no one and may lack the file.
    func checkTrustedCAFiles() throws(ConfigurationError) {
        for file in trustedCAFiles {
            if let problem = TrustedCAFile.problem(file.path) {
                throw ConfigurationError(field: file.field, problem: problem)
            }
        }
    }
}
