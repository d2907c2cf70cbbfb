import XCTest

// (being written)
final class NotifierTestsPlaceholder: XCTestCase {}
