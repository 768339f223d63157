import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Serves the files under one folder, never anything outside it: `..`, `%2e%2e`, encoded slashes, hidden files,
/// and symbolic links that resolve outside the folder all answer 404. Files are kept in memory and re-checked
/// against the disk at most once a second, so the hot path makes no system call.
public final class StaticFiles: Sendable {
    private struct CachedFile {
        var body: [UInt8]
        var contentType: String
        var etag: String
        var lastModified: String
        var modifiedSeconds: Int
        var identity: [Int]
        var checkedAt: UInt64

        /// Validators and caching policy (what a 304 carries).
        var validatorHeaders: HTTPHeaders {
            ["ETag": etag, "Last-Modified": lastModified, "Cache-Control": "public, max-age=300"]
        }

        /// Built once per file version, so a hit allocates no header strings.
        var okHeaders: HTTPHeaders = HTTPHeaders()
    }

    /// Files larger than this are not served (Public/ holds pages, styles and images).
    public static let maxFileBytes = 8 * 1024 * 1024

    /// What a page links: styles, images, icons and fonts. Templates and locale files live in the same folder but
    /// are the server's inputs, not assets, so they are never served (`/static/templates/…` answered the raw HTML).
    public static let pageAssetExtensions: Set<String> = [
        "css", "svg", "png", "jpg", "jpeg", "gif", "webp", "ico", "woff2", "woff", "webmanifest",
    ]

    private let root: String
    private let servedExtensions: Set<String>?
    private let cache = Mutex<[String: CachedFile]>([:])
    /// How many files are cached (tests).
    var cachedFiles: Int { cache.withLock { $0.count } }
    private let revalidateAfter: UInt64 = 1_000_000_000

    /// `root` must exist; it is resolved once (symbolic links included) so containment checks compare real paths.
    /// `servedExtensions` (lower case, nil for any) names the only file types answered; any other is a 404.
    public init(root: String, servedExtensions: Set<String>? = nil) {
        self.root = Self.realPath(root) ?? root
        self.servedExtensions = servedExtensions
    }

    /// Answers a GET or HEAD for `relativePath` (the raw, still percent-encoded rest of the URL path).
    public func response(for relativePath: String, request: HTTPRequest) -> HTTPResponse {
        // Cached under the path as decoded: each spelling of one file (`%6cinkout.css`, `%63ss/…`) kept a copy of
        // its body of its own, and anyone could grow the cache without end. A path with no escape is as decoded.
        let key =
            relativePath.utf8.contains(UInt8(ascii: "%"))
            ? Self.safeSegments(relativePath)?.joined(separator: "/") : relativePath
        guard let key else { return HTTPError(.notFound, "Not found.").response }
        let now = monotonicNanoseconds()
        let cached = cache.withLock { $0[key] }
        let file: CachedFile
        if let cached, now &- cached.checkedAt < revalidateAfter {
            file = cached
        } else {
            switch load(relativePath, previous: cached, now: now) {
            case .file(let loaded):
                file = loaded
                cache.withLock { $0[key] = loaded }
            case .missing:
                cache.withLock { _ = $0.removeValue(forKey: key) }
                return HTTPError(.notFound, "Not found.").response
            case .unreadable:
                // There, but not readable now (the process out of descriptors): a 404 would be cached by browsers
                // and proxies for a file that exists.
                var response = HTTPError(.serviceUnavailable, "Try again shortly.").response
                response.headers.add(name: "Retry-After", value: "1")
                return response
            }
        }
        if isNotModified(request, file) {
            return HTTPResponse(status: .notModified, headers: file.validatorHeaders)
        }
        return HTTPResponse(status: .ok, headers: file.okHeaders, body: file.body)
    }

    /// RFC 9110 §13.1.2: If-None-Match wins over If-Modified-Since when both are present.
    private func isNotModified(_ request: HTTPRequest, _ file: CachedFile) -> Bool {
        if let match = request.headers["if-none-match"] {
            let tags = match.split(separator: ",").map { $0.trimmingASCIIWhitespace() }
            return tags.contains { $0 == "*" || $0 == file.etag || $0 == "W/" + file.etag }
        }
        if let since = request.headers["if-modified-since"], let seconds = HTTPDate.parse(since) {
            return file.modifiedSeconds <= seconds
        }
        return false
    }

    private enum Loaded {
        case file(CachedFile)
        case missing
        /// The file is there and a regular file of a served type, but reading it failed.
        case unreadable
    }

    private func load(_ relativePath: String, previous: CachedFile?, now: UInt64) -> Loaded {
        guard let segments = Self.safeSegments(relativePath) else { return .missing }
        let candidate = root + "/" + segments.joined(separator: "/")
        // The real path must still lie inside the root: this is what stops symbolic links pointing outside.
        guard let real = Self.realPath(candidate), real.hasPrefix(root + "/") else { return .missing }
        // Both the name asked for and the file it resolves to must be of a served type (a link named `x.css` to a
        // template is still a template).
        if let servedExtensions,
            !servedExtensions.contains(Self.fileExtension(candidate))
                || !servedExtensions.contains(Self.fileExtension(real))
        {
            return .missing
        }
        var info = stat()
        guard stat(real, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) <= Self.maxFileBytes
        else { return .missing }
        let identity = [Int(info.st_ino), Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
        if var previous, previous.identity == identity {
            previous.checkedAt = now
            return .file(previous)
        }
        guard let data = FileManager.default.contents(atPath: real) else { return .unreadable }
        let etag = "\"" + identity.map { String($0, radix: 16) }.joined(separator: "-") + "\""
        var file = CachedFile(
            body: Array(data),
            contentType: Self.contentType(for: real),
            etag: etag,
            lastModified: HTTPDate.format(info.st_mtim.tv_sec),
            modifiedSeconds: info.st_mtim.tv_sec,
            identity: identity,
            checkedAt: now
        )
        file.okHeaders = file.validatorHeaders
        file.okHeaders.add(name: "Content-Type", value: file.contentType)
        file.okHeaders.add(name: "X-Content-Type-Options", value: "nosniff")
        return .file(file)
    }

    /// Decoded path segments, or nil when any is empty, `.`/`..`, hidden, or carries an encoded separator.
    static func safeSegments(_ relativePath: String) -> [String]? {
        let raw = relativePath.split(separator: "/", omittingEmptySubsequences: false)
        guard !raw.isEmpty else { return nil }
        var segments: [String] = []
        for part in raw {
            guard let segment = FormDecoding.decodePathSegment(part), !segment.isEmpty, !segment.hasPrefix(".")
            else { return nil }
            segments.append(segment)
        }
        return segments
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The lower-cased text after the last dot of the file's name ("" when there is none).
    static func fileExtension(_ path: String) -> String {
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: ".") else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    static func contentType(for path: String) -> String {
        switch fileExtension(path) {
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json": return "application/json"
        case "txt": return "text/plain; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "woff2": return "font/woff2"
        case "woff": return "font/woff"
        case "webmanifest": return "application/manifest+json"
        default: return "application/octet-stream"
        }
    }
}
