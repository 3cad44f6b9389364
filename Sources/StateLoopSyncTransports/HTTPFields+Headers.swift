import HTTPTypes

extension HTTPFields {
    /// `headers` as fields, a name that is not a valid field name left out: how the transports
    /// and the test kit's in-process clients turn an app's headers into a request's.
    package init(_ headers: [String: String]) {
        self.init()
        for (name, value) in headers {
            if let field = HTTPField.Name(name) { self[field] = value }
        }
    }
}
