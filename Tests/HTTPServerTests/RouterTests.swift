import Testing

@testable import HTTPServer

@Suite("Router")
struct RouterTests {
    let router: Router = {
        var router = Router()
        router.get("/") { _ in .text("root") }
        router.get("/checkout/{id}") { _ in .text("get") }
        router.post("/checkout/{id}") { _ in .text("post") }
        router.get("/static/{path...}") { _ in .text("static") }
        return router
    }()

    func describe(_ method: String, _ path: String) -> String {
        switch router.match(method: method, path: Substring(path)) {
        case .route(let route, let parameters):
            let values = parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            return "\(route.method) \(values)"
        case .methodNotAllowed(let allowed): return "405 " + allowed.joined(separator: ",")
        case .notFound: return "404"
        }
    }

    @Test func matchesLiteralsParametersAndRemainders() {
        #expect(describe("GET", "/") == "GET ")
        #expect(describe("GET", "/checkout/abc%20d") == "GET id=abc d")
        #expect(describe("POST", "/checkout/abc") == "POST id=abc")
        #expect(describe("GET", "/static/css/site.css") == "GET path=css/site.css")
    }

    @Test func headUsesTheGetRoute() {
        #expect(describe("HEAD", "/checkout/x") == "GET id=x")
    }

    @Test func unknownPathsAndMethods() {
        #expect(describe("GET", "/nope") == "404")
        #expect(describe("GET", "/checkout") == "404")
        #expect(describe("GET", "/checkout/a/b") == "404")
        #expect(describe("GET", "/checkout/") == "404")
        #expect(describe("DELETE", "/checkout/x") == "405 GET,POST,HEAD")
        #expect(describe("POST", "/") == "405 GET,HEAD")
    }

    @Test func anEncodedSlashNeverMatchesAParameter() {
        #expect(describe("GET", "/checkout/a%2Fb") == "404")
        #expect(describe("GET", "/checkout/a%zz") == "404")
    }

    /// Routes are looked up by their first segment; one that starts with a parameter still takes its turn in the
    /// order routes were added.
    @Test func theFirstAddedMatchingRouteWinsWhateverItsFirstSegment() {
        var router = Router()
        router.get("/about") { _ in .text("about") }
        router.get("/{page}") { _ in .text("page") }
        router.get("/help") { _ in .text("help") }
        router.post("/{page}/{item}") { _ in .text("item") }
        router.get("/shop/{item}") { _ in .text("shop") }
        func pattern(_ method: String, _ path: String) -> String {
            switch router.match(method: method, path: Substring(path)) {
            case .route(let route, _): return route.pattern
            case .methodNotAllowed(let allowed): return "405 " + allowed.joined(separator: ",")
            case .notFound: return "404"
            }
        }
        #expect(pattern("GET", "/about") == "/about")
        #expect(pattern("GET", "/help") == "/{page}")
        #expect(pattern("GET", "/anything") == "/{page}")
        #expect(pattern("POST", "/shop/x") == "/{page}/{item}")
        #expect(pattern("GET", "/shop/x") == "/shop/{item}")
        #expect(pattern("PUT", "/shop/x") == "405 POST,GET,HEAD")
        #expect(pattern("GET", "/a/b/c") == "404")
    }

    /// Each route says what body it takes; the server asks when a head arrives. GET takes none unless told, other
    /// methods the server's limit, which also caps a larger route limit; no route is a 404 and another method a
    /// 405 naming the allowed ones, both without reading the body.
    @Test func eachRouteGivesItsBodyLimit() {
        var router = Router()
        router.get("/healthz") { _ in .text("ok") }
        router.post("/form") { _ in .text("form") }
        router.post("/v1/tokens", bodyLimit: .upTo(16_384) { _ in HTTPResponse(status: .contentTooLarge) }) { _ in
            .text("tokens")
        }
        router.post("/upload", bodyLimit: .upTo(10_000_000)) { _ in .text("upload") }
        func admission(_ method: String, _ path: String) -> String {
            switch router.admission(for: HTTPRequest(method: method, target: path), serverLimit: 1_048_576) {
            case .read(let maxBytes, let limit):
                return "read \(maxBytes)" + (limit.tooLarge == nil ? "" : " own 413")
            case .refuse(let response):
                return "refuse \(response.status.code)" + (response.headers["Allow"].map { " " + $0 } ?? "")
            }
        }
        #expect(admission("GET", "/healthz") == "read 0")
        #expect(admission("HEAD", "/healthz") == "read 0")
        #expect(admission("POST", "/form") == "read 1048576")
        #expect(admission("POST", "/v1/tokens?x=1") == "read 16384 own 413")
        #expect(admission("POST", "/upload") == "read 1048576")
        #expect(admission("POST", "/healthz") == "refuse 405 GET, HEAD")
        #expect(admission("PUT", "/nothing") == "refuse 404")
    }
}
