import StateLoopWire

extension Versioned {
    /// Takes `repeated`'s `lastMutationID` when it is newer: a repeat of the held version brings
    /// nothing else, but the server may have processed more of the reader's mutations since.
    mutating func adoptLastMutationID(of repeated: Versioned) {
        if let newer = repeated.lastMutationID, newer > lastMutationID ?? 0 {
            lastMutationID = newer
        }
    }
}
