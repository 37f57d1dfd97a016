package partition_test

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines/spark/partition"
)

// Example folds the two string columns of PySpark's documented
// hash('ABC', 'DEF') and places the key in 200 partitions. The hashes
// printed are the ones Spark documents: -757602832 for hash('ABC') and
// 599895104 for hash('ABC', 'DEF').
func Example() {
	h := partition.Seed
	h = partition.String(h, "ABC")
	fmt.Println(h, partition.Of(h, 200))
	h = partition.String(h, "DEF")
	fmt.Println(h, partition.Of(h, 200))
	// Output:
	// -757602832 168
	// 599895104 104
}

// ExampleOf shows pmod on a negative hash, as in Spark's documented
// pmod(-10, 3) = 2.
func ExampleOf() {
	fmt.Println(partition.Of(10, 3), partition.Of(-10, 3))
	// Output: 1 2
}

// ExampleNull shows that a null column leaves the hash as it was, so
// hash(null) is the seed 42.
func ExampleNull() {
	fmt.Println(partition.Null(partition.Seed))
	// Output: 42
}
