import StateLoop
import StateLoopWire

extension ResourceMachine {
    typealias Loop = Feedback<ResourceMachine, Event>

    /// The resource's effects, each one a query on the state.
    static func feedbacks(
        sources: ResourceSources<Value>,
        policy: ResourcePolicy,
        clock: any Clock<Duration>
    ) -> [Loop] {
        var loops: [Loop] = [
            // The request in flight.
            .react(query: \.fetch) { fetch, send in
                do {
                    let value = try await sources.pull()
                    await send(.fetched(id: fetch.id, value))
                } catch {
                    await send(.fetchFailed(id: fetch.id, ResourceFailure(error, kind: policy.classify(error))))
                }
            },
            // "Taking longer than expected", for the request in flight.
            .react(query: { $0.fetch?.id }) { id, send in
                if (try? await clock.sleep(for: policy.slowThreshold)) != nil {
                    await send(.slow(id: id))
                }
            },
            // The deadline of the request in flight: given up as transient once it passes, which
            // cancels the request (its query goes away) and drops any late answer.
            .react(query: { state in policy.requestTimeout == nil ? nil : state.fetch?.id }) { id, send in
                guard let timeout = policy.requestTimeout else { return }
                if (try? await clock.sleep(for: timeout)) != nil {
                    await send(.timedOut(id: id, after: timeout))
                }
            },
            // Connectivity came back: pull once it has stayed back a while.
            .react(query: \.settling) { id, send in
                if (try? await clock.sleep(for: policy.reconnectSettle)) != nil {
                    await send(.settled(id: id))
                }
            },
            // The retry backoff; paused while offline, settling or unobserved.
            .react(query: { $0.isOnline && $0.settling == nil && $0.subscribers > 0 ? $0.retry : nil }) { retry, send in
                if (try? await clock.sleep(for: retry.delay)) != nil {
                    await send(.retryDue)
                }
            },
            // The grace period of a request whose last subscriber left.
            .react(query: { $0.subscribers == 0 && ($0.fetch != nil || $0.retry != nil) ? $0.lastFetchID : nil }) { _, send in
                if (try? await clock.sleep(for: policy.gracePeriod)) != nil {
                    await send(.graceExpired)
                }
            },
            // The push channel runs for the resource's whole life, except while the server
            // refuses the credentials: stopped then (no reconnection loop against a 401), and
            // started again by the refresh that begins a new session.
            .react(query: { $0.isUnauthorized ? nil : $0.session }) { _, send in
                await sources.push { message in await send(.pushed(message)) }
            },
            // Connectivity runs for the resource's whole life.
            .react(query: { _ in true }) { _, send in
                await sources.connectivity { online in await send(.connectivity(online: online)) }
            },
        ]
        if let interval = policy.pollInterval {
            // The next poll, restarted by every success; absent while anything else is going on.
            loops.append(
                .react(query: { state in
                    state.subscribers > 0 && state.fetch == nil && state.retry == nil
                        && state.failure == nil && state.isOnline && state.settling == nil ? state.successes : nil
                }) { _, send in
                    if (try? await clock.sleep(for: interval)) != nil {
                        await send(.pollDue)
                    }
                }
            )
        }
        return loops
    }
}
