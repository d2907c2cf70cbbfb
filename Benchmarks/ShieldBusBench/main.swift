// shieldbus-bench: throughput through the broker beside a plain libzmq proxy. (being written)
print("not written yet")
