import Foundation
import Glibc

/// A file of extra trusted certificates (`caFile`) is read by libcurl at each call: one that is missing or not a
/// readable file failed every call to that service, much later, as a TLS error. Checked when the configuration
/// is read instead.
public enum TrustedCAFile {
    /// Why `path` cannot serve as the file of trusted certificates, or nil when it is a readable regular file with
    /// a PEM certificate in it.
    public static func problem(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return "\(path) cannot be found (\(String(cString: strerror(errno))))" }
        guard status.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file of PEM certificates" }
        guard access(path, R_OK) == 0 else { return "\(path) cannot be read (\(String(cString: strerror(errno))))" }
        // A readable file of something else (a key, a typo'd copy) trusts nothing, as no file. Only a PEM
        // certificate block is looked for, not parsed: libcurl takes bundles (trusted certificates, CRLs beside
        // them) a stricter reading would refuse.
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            certificateMarkers.contains(where: { text.contains($0) })
        else { return "\(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)" }
        return nil
    }

    static let certificateMarkers = ["-----BEGIN CERTIFICATE-----", "-----BEGIN TRUSTED CERTIFICATE-----"]
}
