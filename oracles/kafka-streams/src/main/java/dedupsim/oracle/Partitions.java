package dedupsim.oracle;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.processor.internals.DefaultStreamPartitioner;

/**
 * Checks dedupsim's partitioner vectors (engines/kstreams/testdata/partitioner.tsv)
 * against Kafka 4.4.0 itself: for each line "serde TAB key TAB murmur2 TAB p1,...,p8",
 * the key serialized by Kafka's serializer (string: StringSerializer, UTF-8; long:
 * LongSerializer, 8 bytes big-endian), Utils.murmur2 of those bytes, and for n = 1..8
 * partitions both the producer's BuiltInPartitioner.partitionForKey and Kafka Streams'
 * DefaultStreamPartitioner (what a repartition topic's records go to).
 * With --print, reads "serde TAB key" lines and prints the full lines instead.
 */
public final class Partitions {
  private static final int MAX_N = 8;

  private Partitions() {}

  private static byte[] serialize(String serde, String key) {
    switch (serde) {
      case "string": return new StringSerializer().serialize("repartition", key);
      case "long": return new LongSerializer().serialize("repartition", Long.parseLong(key));
      default: throw new IllegalArgumentException("serde " + serde + ": want string or long");
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static String line(String serde, String key) {
    byte[] bytes = serialize(serde, key);
    Serializer ser = serde.equals("string") ? new StringSerializer() : new LongSerializer();
    Object k = serde.equals("string") ? key : (Object) Long.parseLong(key);
    DefaultStreamPartitioner<Object, Object> streams = new DefaultStreamPartitioner<>(ser);
    List<String> ps = new ArrayList<>();
    for (int n = 1; n <= MAX_N; n++) {
      int p = BuiltInPartitioner.partitionForKey(bytes, n);
      Optional<Set<Integer>> s = streams.partitions("repartition", k, null, null, n);
      if (s.isEmpty() || !s.get().equals(Set.of(p))) {
        throw new IllegalStateException(key + ": DefaultStreamPartitioner " + s + " != BuiltInPartitioner " + p);
      }
      ps.add(Integer.toString(p));
    }
    return serde + "\t" + key + "\t" + Utils.murmur2(bytes) + "\t" + String.join(",", ps);
  }

  public static void main(String[] args) throws Exception {
    boolean print = args.length == 2 && args[0].equals("--print");
    Path file = Path.of(args[args.length - 1]);
    int n = 0, failed = 0;
    for (String l : Files.readAllLines(file)) {
      if (l.isEmpty() || l.startsWith("#")) {
        if (print) System.out.println(l);
        continue;
      }
      String[] f = l.split("\t", -1);
      String want = line(f[0], f[1]);
      n++;
      if (print) {
        System.out.println(want);
      } else if (!want.equals(l)) {
        failed++;
        System.out.println("FAIL partitioner: have " + l.replace('\t', ' ') + ", Kafka: " + want.replace('\t', ' '));
      }
    }
    if (!print) {
      System.out.printf("kafka-streams oracle: partitioner: %d keys, %d failed%n", n, failed);
      System.exit(failed == 0 ? 0 : 1);
    }
  }
}
