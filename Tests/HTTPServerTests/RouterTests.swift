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
}
