/// Makes a system's events durable before anything sees the states they produce. StateLoopJournal
/// implements it; the core only knows when to call it.
///
/// Threading: both methods are called synchronously on the system's actor, in event order.
/// `record` is called once per reduced event, right after the reducer; `commit` before the
/// states recorded since the last commit are shown to any feedback loop or observer. A run of
/// events sent together (``System/send(contentsOf:fileID:line:)``, or several sends queued while the system
/// was busy) is recorded event by event and committed once.
///
/// A recorder that cannot write keeps what it could not write and reports it on its own: the
/// system goes on in memory either way, so a full disk never stops the app.
@usableFromInline
package protocol EventRecorder<State, Event>: AnyObject {
    associatedtype State
    associatedtype Event

    /// `event` was reduced and `state` is the result; nothing has seen `state` yet.
    func record(_ event: Event, producing state: State)

    /// Makes every recorded event durable.
    func commit()
}
