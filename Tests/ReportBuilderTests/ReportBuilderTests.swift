import XCTest

// (being written)
final class ReportBuilderTestsPlaceholder: XCTestCase {}
