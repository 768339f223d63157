import Foundation
import Testing

@testable import HTTPServer

@Suite("StaticFiles")
struct StaticFilesTests {
    /// A temporary tree: root/public/{site.css, sub/page.html, .hidden, escape -> ../secret.txt}, root/secret.txt.
    final class Tree {
        let root: URL
        let files: StaticFiles
        /// The same folder, serving only styles.
        let assets: StaticFiles

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-static-\(UUID().uuidString)")
            let publicDir = root.appendingPathComponent("public")
            try FileManager.default.createDirectory(
                at: publicDir.appendingPathComponent("sub"),
                withIntermediateDirectories: true
            )
            try Data("body{}".utf8).write(to: publicDir.appendingPathComponent("site.css"))
            try Data("<p>hi</p>".utf8).write(to: publicDir.appendingPathComponent("sub/page.html"))
            try Data("hidden".utf8).write(to: publicDir.appendingPathComponent(".hidden"))
            try Data("secret".utf8).write(to: root.appendingPathComponent("secret.txt"))
            try FileManager.default.createSymbolicLink(
                atPath: publicDir.appendingPathComponent("escape").path,
                withDestinationPath: "../secret.txt"
            )
            try FileManager.default.createSymbolicLink(
                atPath: publicDir.appendingPathComponent("inside.css").path,
                withDestinationPath: "site.css"
            )
            try FileManager.default.createSymbolicLink(
                atPath: publicDir.appendingPathComponent("disguised.css").path,
                withDestinationPath: "sub/page.html"
            )
            files = StaticFiles(root: publicDir.path)
            assets = StaticFiles(root: publicDir.path, servedExtensions: ["css"])
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        func get(_ path: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
            var request = HTTPRequest(method: "GET", target: "/static/" + path)
            request.headers = headers
            return files.response(for: path, request: request)
        }

        func asset(_ path: String) -> HTTPResponse {
            assets.response(for: path, request: HTTPRequest(method: "GET", target: "/static/" + path))
        }
    }

    /// Every spelling of one file is one cache entry: anyone sending `%73ite.css`, `%53ite.css`… kept a copy of
    /// the body per spelling, without end.
    @Test func theCacheHoldsAFileOnceHoweverItsPathIsSpelled() throws {
        let tree = try Tree()
        for spelling in [
            "site.css", "%73ite.css", "%73%69te.css", "s%69te.css", "sit%65.css", "site%2ecss", "site%2Ecss",
        ] {
            #expect(tree.get(spelling).body == Array("body{}".utf8), "\(spelling)")
        }
        #expect(tree.get("sub/page.html").status == .ok && tree.get("%73ub/page.html").status == .ok)
        #expect(tree.files.cachedFiles == 2)
        #expect(tree.get("sub%2fpage.html").status == .notFound)
    }

    @Test func servesFilesWithTypeAndValidators() throws {
        let tree = try Tree()
        let css = tree.get("site.css")
        #expect(css.status == .ok)
        #expect(css.body == Array("body{}".utf8))
        #expect(css.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(css.headers["ETag"] != nil)
        #expect(css.headers["Last-Modified"] != nil)
        #expect(tree.get("sub/page.html").headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(tree.get("inside.css").status == .ok)
    }

    @Test func revalidationAnswers304() throws {
        let tree = try Tree()
        let first = tree.get("site.css")
        let etag = try #require(first.headers["ETag"])
        let lastModified = try #require(first.headers["Last-Modified"])
        #expect(tree.get("site.css", headers: ["If-None-Match": etag]).status == .notModified)
        #expect(tree.get("site.css", headers: ["If-None-Match": "\"other\", " + etag]).status == .notModified)
        #expect(tree.get("site.css", headers: ["If-None-Match": "\"other\""]).status == .ok)
        #expect(tree.get("site.css", headers: ["If-Modified-Since": lastModified]).status == .notModified)
        #expect(
            tree.get("site.css", headers: ["If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"]).status == .ok
        )
        // Not dates, anyone's to send: ignored, never a stop (year -2147483648 overflowed the year's offset).
        for odd in [
            "Sun, 06 Nov -2147483648 08:49:37 GMT", "Sun, 06 Nov 2147483647 08:49:37 GMT",
            "Sun, 06 Nov -2147483648 -2147483648:-2147483648:-2147483648 GMT",
            // Times and days that do not exist were rolled over into a later date, and answered 304.
            "Sun, 06 Dec 2099 25:61:61 GMT", "Sun, 31 Feb 2099 08:49:37 GMT",
        ] {
            #expect(tree.get("site.css", headers: ["If-Modified-Since": odd]).status == .ok, "\(odd)")
        }
    }

    @Test(
        "never serves anything outside the folder",
        arguments: [
            "../secret.txt", "%2e%2e/secret.txt", "%2E%2E/secret.txt", "sub/../../secret.txt",
            "sub%2f..%2f..%2fsecret.txt",
            "..%5csecret.txt", "escape", ".hidden", "sub", "", "sub//page.html", "/etc/passwd", "%2fetc%2fpasswd",
            "site.css%00.html", "missing.css",
        ]
    )
    func refuses(path: String) throws {
        let tree = try Tree()
        #expect(tree.get(path).status == .notFound)
    }

    @Test func servesOnlyTheNamedFileTypesWhenTold() throws {
        let tree = try Tree()
        #expect(tree.asset("site.css").status == .ok)
        #expect(tree.asset("sub/page.html").status == .notFound)
        // A link named like a style that leads to a page is still a page.
        #expect(tree.asset("disguised.css").status == .notFound)
        #expect(tree.get("disguised.css").status == .ok)
    }
}
