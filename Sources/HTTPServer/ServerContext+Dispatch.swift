extension ServerContext {
    /// Routes `request` and runs its handler where the route says. Returns the response when it is ready now
    /// (an event-loop handler, 404, 405), or nil when the handler answers later through the `Responder` made by
    /// `makeResponder`. The route's path parameters are added to `request`.
    func dispatch(_ request: inout HTTPRequest, makeResponder: (HTTPRequest) -> Responder) -> HTTPResponse? {
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            return router.notFound(request)
        case .methodNotAllowed(let allowed):
            return router.methodNotAllowed(allowed, request)
        case .route(let route, let parameters):
            request.pathParameters = parameters
            switch route.body {
            case .immediate(.eventLoop, let handler):
                return respond(handler, to: request, route: route.pattern)
            case .immediate(.workerPool, let handler):
                let request = request
                let responder = makeResponder(request)
                workers.submit { [self] in
                    responder.respond(respond(handler, to: request, route: route.pattern))
                }
                return nil
            case .immediate(.outbound(let busy), let handler):
                let request = request
                let responder = makeResponder(request)
                let answerBusy: @Sendable () -> Void = { [self] in
                    workers.submit { responder.respond(self.respond(busy, to: request, route: route.pattern)) }
                }
                let queuedAt = monotonicNanoseconds()
                let queued = outbound.submit(
                    { [self] in
                        guard outboundAdmission.starts(queuedAt: queuedAt, stopping: isStopping) else {
                            answerBusy()
                            return
                        }
                        responder.respond(respond(handler, to: request, route: route.pattern))
                    },
                    whileFewerWaitThan: outboundAdmission.queueLimit
                )
                if !queued { answerBusy() }
                return nil
            case .deferred(let handler):
                handler(request, makeResponder(request))
                return nil
            }
        }
    }
}
