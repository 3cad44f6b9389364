import StateLoopWire

extension RowCollection {
    /// The key the store keeps the row `id` under.
    package func key(_ id: String) -> ResourceKey {
        ResourceKey(resource: name, id: id)
    }
}
