import XCTest

// Tests that run the Python example plugin against the real broker (being written).
final class PythonPluginTests: XCTestCase {}
