// The wire types (versions, versioned values, mutation ids, hints, error bodies) are part of
// every resource's API: an app that imports StateLoopSync has them without a second import.
@_exported import StateLoopWire
