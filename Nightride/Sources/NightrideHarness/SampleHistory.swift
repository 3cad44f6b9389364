import NightrideModel

/// Past rides invented for a new account by a harness made with `sampleHistory`, so that a
/// demo's history screen has pages to go through; stored at sign-up like any ride. Derived from
/// the name alone: the same user gets the same past in every run.
package enum SampleHistory {
    private static let others = ["Camille", "Léa", "Hugo", "Inès", "Malik", "Jade", "Nora", "Yanis", "Louise", "Sacha"]

    /// Between 15 and 30 rides, oldest first.
    package static func rides(for user: String, places: [Place]) -> [Ride] {
        let random = SeededRandom(seed: SeededRandom.fnv1a(user))
        let count = 15 + Int(random.bits("count") % 16)
        return (0..<count).map { index in
            let draw = random.bits("ride \(index)")
            let other = others[Int(draw % UInt64(others.count))]
            let destination = places[Int((draw >> 16) % UInt64(places.count))]
            let asPassenger = (draw >> 40) & 1 == 0
            return Ride(
                id: "h\(index + 1)-\(user)",
                passenger: asPassenger ? user : other,
                driver: asPassenger ? other : user,
                destination: destination
            )
        }
    }
}
