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
}
