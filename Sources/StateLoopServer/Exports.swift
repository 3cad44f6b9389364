// The wire types (versions, versioned values, mutation ids, receipts, error bodies) are part of
// every route's and transaction's API: an app that imports StateLoopServer has them without a
// second import, as one that imports StateLoopSync does.
@_exported import StateLoopWire
