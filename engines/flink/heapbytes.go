package flink

// Heap state bytes: an estimate of what Flink's heap backend
// (HashMapStateBackend) holds per state entry, read from the fields of
// the classes it allocates (flink-runtime, flink-core and
// flink-table-common 2.3.0 sources) under HotSpot's 64-bit layout with
// compressed oops and class pointers (heaps under 32 GiB): a 12-byte
// object header, 16 for an array (header and length), 4-byte references,
// every object padded to 8 bytes. docs/flink.md ("State bytes") shows the
// arithmetic; it is an estimate: a JVM with other flags (no compressed
// oops: 16-byte headers, 8-byte references), another key type, or object
// reuse upstream changes it, and the garbage collector's own overhead is
// not counted.
const (
	// heapEntryObject is CopyOnWriteStateMap.StateMapEntry: header 12,
	// key, namespace, state and next references (4 each), hash,
	// entryVersion and stateVersion ints (4 each): 40.
	heapEntryObject = 40
	// heapTTLValue is TtlValue (the TTL wrapper of a value with TTL):
	// header 12, userValue reference 4, lastAccessTimestamp long 8: 24.
	heapTTLValue = 24
	// heapBinaryRow is a BinaryRowData copy (BinaryRowData.copy, as the
	// key selector makes one per key) without its byte array:
	// BinaryRowData 32 (header 12; segments reference, offset,
	// sizeInBytes, arity, nullBitsSizeInBytes 4 each), its
	// MemorySegment[1] 24 (16 + 4, padded), the MemorySegment 56 (header
	// 12; heapMemory, offHeapBuffer, owner, cleaner, isFreedAtomic
	// references 4 each; address and addressLimit longs 8 each; size int
	// 4; allowWrap boolean 1: 53, padded) and its AtomicBoolean 16:
	// 128.
	heapBinaryRow = 32 + 24 + 56 + 16
	// heapKeyGroups is the key groups of a job at parallelism 1
	// (KeyGroupRangeAssignment's default max parallelism, 128): the heap
	// backend keeps one CopyOnWriteStateMap per key group, each with its
	// own bucket array.
	heapKeyGroups = 128
	// heapMapCapacity is CopyOnWriteStateMap.DEFAULT_CAPACITY, the
	// buckets of a new map.
	heapMapCapacity = 128
)

// BinaryRowBytes returns sizeInBytes of a BinaryRowData of arity fields
// whose variable-length data is varBytes long: the null bit set
// (calculateBitSetWidthInBytes: 8 bytes per 64 bits of arity plus the
// 8-bit header), 8 bytes per field, and the variable-length part (a
// string longer than 7 bytes, padded to 8 by BinaryRowWriter).
func BinaryRowBytes(arity, varBytes int) int {
	return (arity+63+8)/64*8 + 8*arity + pad8(varBytes)
}

// HeapRowBytes returns the heap bytes of a BinaryRowData copy of
// rowBytes bytes (BinaryRowBytes): the objects heapBinaryRow counts and
// its byte array (16 + rowBytes, padded).
func HeapRowBytes(rowBytes int) int64 {
	return heapBinaryRow + int64(pad8(16+rowBytes))
}

// HeapEntryBytes returns the heap bytes of one ValueState entry: the
// state map entry, the key (HeapRowBytes of the key row), the TTL
// wrapper when TTL is on, and the value's own bytes (0 for a flag: the
// boxed Boolean.TRUE is shared; a row otherwise). The namespace is
// VoidNamespace, a shared singleton. The bucket arrays are not per entry:
// see HeapTableBytes.
func HeapEntryBytes(keyHeapBytes, valueHeapBytes int64, ttl bool) int64 {
	n := heapEntryObject + keyHeapBytes + valueHeapBytes
	if ttl {
		n += heapTTLValue
	}
	return n
}

// HeapTableBytes returns the bytes of one state's bucket arrays holding
// entries entries spread evenly over the key groups: per key group a
// StateMapEntry[] of 4-byte references, DEFAULT_CAPACITY at first and
// doubled whenever the map holds more than 3/4 of it.
func HeapTableBytes(entries int64) int64 {
	perGroup := (entries + heapKeyGroups - 1) / heapKeyGroups
	capacity := int64(heapMapCapacity)
	for perGroup > capacity/4*3 {
		capacity *= 2
	}
	return heapKeyGroups * (16 + 4*capacity)
}

func pad8(n int) int { return (n + 7) &^ 7 }

// The mini-batch bundle (AbstractMapBundleOperator's `bundle`, a
// java.util.HashMap created at open and cleared, never shrunk, at each
// finishBundle; flink-table-runtime read at apache/flink master): its key
// is the keyed backend's current key (KeyedMapBundleOperator.getKey: the
// key selector's BinaryRowData copy of the key's first row in the
// bundle), its value what the function's addInput returns: a copy of the
// row (serializer.copy) for proctime keep-first (the key's first row) and
// keep-last (its last: every row is copied, the earlier copies are
// garbage), an ArrayList of copies of every row for rowtime
// (RowTimeMiniBatchDeduplicateFunction). Same layout as above.
const (
	// heapHashMap is java.util.HashMap: header 12; AbstractMap's keySet
	// and values references; table and entrySet references, size,
	// modCount and threshold ints, loadFactor float (4 each): 44, padded.
	heapHashMap = 48
	// heapHashMapNode is HashMap.Node: header 12, hash int, key, value
	// and next references (4 each): 28, padded.
	heapHashMapNode = 32
	// heapArrayList is java.util.ArrayList: header 12, AbstractList's
	// modCount, size int and elementData reference (4 each).
	heapArrayList = 24
	// hashMapCapacity is HashMap's first table (DEFAULT_INITIAL_CAPACITY,
	// allocated at the first put), doubled once it holds more than 3/4.
	hashMapCapacity = 16
	// arrayListCapacity is the elementData of an ArrayList created empty
	// at its first add (DEFAULT_CAPACITY); it grows by half (old + old>>1).
	arrayListCapacity = 10
)

// refArrayBytes returns the bytes of an array of n references.
func refArrayBytes(n int) int64 { return int64(pad8(16 + 4*n)) }

// BundleBytes returns the estimated heap bytes of a mini-batch operator's
// bundle now (0 for a function without one): the HashMap, its table at
// the largest capacity the bundle has needed so far (clear keeps it), and
// per key of the bundle a node, the key (keyHeapBytes, HeapRowBytes of
// the key row) and the value: one row copy (rowHeapBytes) for proctime
// keep-first and keep-last, an ArrayList of a copy of each of the key's
// rows for rowtime. It is an estimate, as the state's: the rows are
// counted as BinaryRowData copies, which they are when the input row is
// a BinaryRowData (another RowData copies into a GenericRowData).
func (o *Operator) BundleBytes(keyHeapBytes, rowHeapBytes int64) int64 {
	if !o.fn.MiniBatch() {
		return 0
	}
	n := int64(heapHashMap)
	if o.bundleCap > 0 {
		n += refArrayBytes(o.bundleCap)
	}
	for _, k := range o.bkeys {
		n += heapHashMapNode + keyHeapBytes
		if o.fn != RowTimeMiniBatch {
			n += rowHeapBytes
			continue
		}
		rows := 0
		for ri := k.first; ri >= 0; ri = o.brows[ri].next {
			rows++
		}
		capacity := arrayListCapacity
		for capacity < rows {
			capacity += capacity >> 1
		}
		n += heapArrayList + refArrayBytes(capacity) + int64(rows)*rowHeapBytes
	}
	return n
}
