import XCTest

// (being written)
final class SupervisionTestsPlaceholder: XCTestCase {}
