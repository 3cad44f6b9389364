/// What the pages of a subscription's whole result brought so far, asked for by pages
/// (``RowSource/page``) as a first sync: the first page's cookie and `lastMutationID`, which
/// the subscription takes once the last page is in, and the ids of the rows every page brought,
/// so that the last page takes off the rows the result no longer holds.
///
/// Kept in memory by the task that asks for the pages: a launch that ends before the last page
/// left the rows stored but no cookie, and the next launch asks for every page again.
struct PagedSync: Sendable {
    /// The first page's cookie: every change committed while the pages were read is after it.
    var cookie: String?
    /// The first page's `lastMutationID`, read with its cookie.
    var lastMutationID: UInt64?
    /// The ids of the rows the pages before the last brought.
    var seen: Set<String> = []
}
