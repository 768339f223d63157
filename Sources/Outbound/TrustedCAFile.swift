import Glibc

/// A file of extra trusted certificates (`caFile`) is read by libcurl at each call: one that is missing or not a
/// readable file failed every call to that service, much later, as a TLS error. Checked when the configuration
/// is read instead.
public enum TrustedCAFile {
    /// Why `path` cannot serve as the file of trusted certificates, or nil when it is a readable regular file.
    public static func problem(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return "\(path) cannot be found (\(String(cString: strerror(errno))))" }
        guard status.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file of PEM certificates" }
        guard access(path, R_OK) == 0 else { return "\(path) cannot be read (\(String(cString: strerror(errno))))" }
        return nil
    }
}
