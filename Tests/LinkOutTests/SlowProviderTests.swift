import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

/// A payment provider that does not answer holds only the checkout posts waiting on it, and those only so long
/// (`Router.Execution.outbound`, `OutboundAdmission`).
@Suite("Slow payment provider")
struct SlowProviderTests {
    /// A server with `threads` worker threads (and as many for the provider) on a fake Stripe.
    static func server(threads: Int, stripe: FakeStripeServer) throws -> LiveApplication {
        try LiveApplication {
            $0.server.workerThreads = threads
            $0.payments.provider = .stripe
            $0.payments[.stripe, "secretKey"] = stripe.secretKey
            $0.payments[.stripe, "webhookSecret"] = "whsec_slow_provider_0123456789"
            $0.payments[.stripe, "apiBase"] = stripe.apiBase
        }
    }

    struct Checkout {
        var location: String
        var session: String
        /// The form post that buys the lifetime product in euros, as the page would send it.
        var post: String
    }

    /// `count` landings, each with its checkout page opened.
    static func checkouts(_ live: LiveApplication, count: Int) throws -> [Checkout] {
        try (0..<count).map { _ in
            let landing = try live.get(TokenMinter.exampleLanding(at: Clock.system.nowMilliseconds()).path)
            let location = try #require(landing.header("Location"))
            let session = try #require(landing.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
            let page = try live.get(location, headers: ["Cookie": session])
            let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
            let body = "csrf=\(csrf)&currency=EUR&product=pro.lifetime"
            let post =
                "POST \(location) HTTP/1.1\r\nHost: t\r\nCookie: \(session)\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            return Checkout(location: location, session: session, post: post)
        }
    }

    /// The answers to the posts, as they come.
    final class Answers: Sendable {
        private let list = Mutex<[(post: Int, status: Int, text: String)]>([])

        func add(_ answer: (post: Int, status: Int, text: String)) { list.withLock { $0.append(answer) } }
        var all: [(post: Int, status: Int, text: String)] { list.withLock { $0 } }
    }

    /// Posts one checkout's form on a thread of its own (a blocked post would hold one of Dispatch's few global
    /// threads, and the others would not be sent until a call ended); its answer joins `answers`.
    static func send(
        _ checkouts: [Checkout],
        _ index: Int,
        port: Int,
        answers: Answers,
        group: DispatchGroup
    ) {
        let request = checkouts[index].post
        group.enter()
        Thread {
            let answer = try? RawClient(port: port, timeout: 30).roundTrip(request)
            answers.add((index, answer?.status ?? 0, answer?.text ?? ""))
            group.leave()
        }.start()
    }

    static let retry = "Payment is not available right now"

    /// With every thread the posts may use taken, the readiness probe, a checkout page and the metrics still
    /// answer.
    @Test func aSlowProviderHoldsOnlyTheFormPostsWaitingOnIt() throws {
        let stripe = try FakeStripeServer()
        defer { stripe.stop() }
        let live = try Self.server(threads: 2, stripe: stripe)
        let checkouts = try Self.checkouts(live, count: 2)
        stripe.enqueue(.held, .held)
        let answers = Answers()
        let posts = DispatchGroup()
        // However the test ends, the held posts are let go and answered before the servers stop.
        var released = false
        defer {
            if !released { stripe.release(2) }
            posts.wait()
        }
        for index in 0..<2 { Self.send(checkouts, index, port: live.port, answers: answers, group: posts) }
        #expect(eventually(within: 30) { stripe.held == 2 })
        // Both posts wait on the provider; what runs on the shared threads answers all the same.
        #expect(try live.get("/readyz").status == 200)
        #expect(try live.get(checkouts[0].location, headers: ["Cookie": checkouts[0].session]).status == 200)
        #expect(try live.get("/metrics").status == 200)
        #expect(stripe.held == 2 && answers.all.isEmpty, "the posts were still waiting")
        stripe.release(2)
        released = true
        posts.wait()
        #expect(answers.all.map(\.status) == [303, 303])
    }

    /// Posts queue for the provider's threads only so far: past four times the pool a post gets the retry page
    /// at once, and those still queued when the server stops get it then, without the provider being called for
    /// them; the call under way finishes within the stop's grace.
    @Test func postsQueuedBehindASlowProviderGetTheRetryPageAtOnce() throws {
        let stripe = try FakeStripeServer()
        defer { stripe.stop() }
        let live = try Self.server(threads: 1, stripe: stripe)
        let checkouts = try Self.checkouts(live, count: 6)
        stripe.enqueue(.held)
        let answers = Answers()
        let sent = DispatchGroup()
        var released = false
        defer {
            if !released { stripe.release(1) }
            sent.wait()
        }
        Self.send(checkouts, 0, port: live.port, answers: answers, group: sent)
        #expect(eventually(within: 30) { stripe.held == 1 })
        // The one thread waits on Stripe; four posts may wait for it, the fifth is answered now.
        for index in 1...5 { Self.send(checkouts, index, port: live.port, answers: answers, group: sent) }
        #expect(eventually(within: 30) { answers.all.count == 1 })
        #expect(answers.all.allSatisfy { $0.status == 200 && $0.text.contains(Self.retry) })
        // The server stops: the posts still queued are answered the same way, while Stripe still holds the first.
        let stopped = DispatchGroup()
        let application = live.application
        DispatchQueue.global().async(group: stopped) { application.shutdown() }
        #expect(eventually(within: 30) { answers.all.count == 5 })
        #expect(stripe.held == 1 && answers.all.allSatisfy { $0.text.contains(Self.retry) })
        stripe.release(1)
        released = true
        sent.wait()
        stopped.wait()
        let first = answers.all.first { $0.post == 0 }
        #expect(first?.status == 303, "\(String(describing: first))")
        #expect(stripe.received.count == 1, "only the first post reached the provider")
    }
}
