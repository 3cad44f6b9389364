// The collections' declarations and queries (`RowCollection`, `RowQuery`, `RowMutation`, the
// wire's differences) are part of every local collection's API: an app that imports
// StateLoopCollections has them without a second import.
@_exported import StateLoopWire
