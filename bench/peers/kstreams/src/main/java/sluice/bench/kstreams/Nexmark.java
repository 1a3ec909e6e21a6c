package sluice.bench.kstreams;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.processor.TimestampExtractor;

/**
 * The Nexmark queries of bench/nexmark (queries.go) with the Kafka Streams
 * DSL. Each writes rows with the column names and JSON shapes of Sluice's
 * output (BIGINT keys as 8 bytes, JSON keys for composite ones, windowed
 * keys as Kafka Streams' windowed serdes write them), so that the driver
 * checksums both alike.
 *
 * <p>Usage: Nexmark --bootstrap HOST:PORT --query qN --app-id ID --state-dir DIR --output TOPIC
 * [--final-grace-ms MS]
 *
 * <p>It runs until its standard input is closed: the driver closes it once
 * the application's committed offsets reached the end of its input and
 * repartition topics (or, measuring latency, once the rows of its last
 * probe events are out). Then it prints its peak RSS as JSON and exits.
 *
 * <p>With --final-grace-ms, q7 emits each window once, when it closes: its
 * windows take that grace instead of ksqlDB's 24 hours, and the result goes
 * through suppress(untilWindowCloses), which emits a window once the task's
 * stream time reaches its end plus the grace.
 */
public final class Nexmark {
  static final String PERSON = "nexmark-person";
  static final String AUCTION = "nexmark-auction";
  static final String BID = "nexmark-bid";
  /** ksqlDB's default grace period for windows and joins. */
  static final Duration GRACE = Duration.ofHours(24);

  static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  @JsonIgnoreProperties(ignoreUnknown = true)
  public static final class Person {
    public long id;
    public String name, emailAddress, creditCard, city, state, extra;
    public long dateTime;
  }

  @JsonIgnoreProperties(ignoreUnknown = true)
  public static final class Auction {
    public long id, initialBid, reserve, dateTime, expires, seller, category;
    public String itemName, description, extra;
  }

  @JsonIgnoreProperties(ignoreUnknown = true)
  public static final class Bid {
    public long auction, bidder, price, dateTime;
    public String channel, url, extra;
  }

  /** Event time is the dateTime field, as the Sluice sources declare it. */
  public static final class EventTime implements TimestampExtractor {
    @Override
    public long extract(ConsumerRecord<Object, Object> r, long partitionTime) {
      Object v = r.value();
      if (v instanceof Bid b) return b.dateTime;
      if (v instanceof Auction a) return a.dateTime;
      if (v instanceof Person p) return p.dateTime;
      return r.timestamp();
    }
  }

  static <T> Serde<T> json(Class<T> cls) {
    Serializer<T> ser =
        (topic, v) -> {
          if (v == null) return null;
          try {
            return JSON.writeValueAsBytes(v);
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        };
    Deserializer<T> de =
        (topic, b) -> {
          if (b == null) return null;
          try {
            return JSON.readValue(b, cls);
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        };
    return Serdes.serdeFrom(ser, de);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static final Serde<Map<String, Object>> ROW = (Serde) json(LinkedHashMap.class);

  static final Serde<Long> LONG = Serdes.Long();
  static final Serde<Bid> BID_SERDE = json(Bid.class);
  static final Serde<Auction> AUCTION_SERDE = json(Auction.class);
  static final Serde<Person> PERSON_SERDE = json(Person.class);

  static Map<String, Object> row(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>(kv.length);
    for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
    return m;
  }

  static final BigDecimal EUR = new BigDecimal("0.908");

  static BigDecimal euros(long price) {
    return BigDecimal.valueOf(price).multiply(EUR);
  }

  static final DateTimeFormatter DAY =
      DateTimeFormatter.ofPattern("yyyy-MM-dd", Locale.ROOT).withZone(ZoneOffset.UTC);

  static int hourUTC(long millis) {
    return (int) Math.floorMod(Math.floorDiv(millis, 3_600_000L), 24L);
  }

  static final Pattern CHANNEL_ID = Pattern.compile("(&|^)channel_id=([^&]*)");

  static String channelId(String url) {
    if (url == null) return null;
    Matcher m = CHANNEL_ID.matcher(url);
    return m.find() ? m.group(2) : null;
  }

  /** SPLIT(s, sep)[i] with ksqlDB's 1-based index, null past the end. */
  static String part(String[] parts, int i) {
    return i >= 1 && i <= parts.length ? parts[i - 1] : null;
  }

  static String jsonKey(Object... kv) {
    try {
      return JSON.writeValueAsString(row(kv));
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  /** The aggregate of q17. */
  public static final class Stats {
    public long total, rank1, rank2, rank3, min = Long.MAX_VALUE, max = Long.MIN_VALUE, sum;
  }

  static final Serde<Stats> STATS_SERDE = json(Stats.class);

  /** The aggregate of q19: the 10 highest prices, highest first. */
  public static final class Top {
    public long[] prices = new long[0];

    Top add(long p) {
      int n = prices.length;
      if (n == 10 && p <= prices[9]) return this;
      int i = n;
      while (i > 0 && prices[i - 1] < p) i--;
      long[] next = new long[Math.min(n + 1, 10)];
      System.arraycopy(prices, 0, next, 0, Math.min(i, next.length));
      if (i < next.length) next[i] = p;
      if (i + 1 < next.length) System.arraycopy(prices, i, next, i + 1, next.length - i - 1);
      prices = next;
      return this;
    }
  }

  static final Serde<Top> TOP_SERDE = json(Top.class);

  /**
   * The topology of query writing to out; finalGrace, when not null, makes
   * q7 emit final rows only, with that grace.
   */
  static Topology build(String query, String out, Duration finalGrace) {
    StreamsBuilder b = new StreamsBuilder();
    Consumed<Long, Bid> bidsC = Consumed.with(LONG, BID_SERDE);
    Produced<Long, Map<String, Object>> toLong = Produced.with(LONG, ROW);
    Serde<Windowed<Long>> timeWindowed = WindowedSerdes.timeWindowedSerdeFrom(Long.class, 10_000L);
    Serde<Windowed<Long>> sessionWindowed = WindowedSerdes.sessionWindowedSerdeFrom(Long.class);
    switch (query) {
      case "q0" ->
          b.stream(BID, bidsC)
              .mapValues(v -> row("BIDDER", v.bidder, "PRICE", v.price, "DATETIME", v.dateTime, "EXTRA", v.extra))
              .to(out, toLong);
      case "q1" ->
          b.stream(BID, bidsC)
              .mapValues(
                  v -> row("BIDDER", v.bidder, "PRICE", euros(v.price), "DATETIME", v.dateTime, "EXTRA", v.extra))
              .to(out, toLong);
      case "q2" ->
          b.stream(BID, bidsC)
              .filter((k, v) -> v.auction % 123 == 0)
              .mapValues(v -> row("PRICE", v.price))
              .to(out, toLong);
      case "q3" -> {
        KTable<Long, Person> people = b.table(PERSON, Consumed.with(LONG, PERSON_SERDE));
        b.stream(AUCTION, Consumed.with(LONG, AUCTION_SERDE))
            .selectKey((k, a) -> a.seller)
            .join(people, (a, p) -> new Object[] {a, p}, Joined.with(LONG, AUCTION_SERDE, PERSON_SERDE))
            .filter(
                (k, ap) -> {
                  Auction a = (Auction) ap[0];
                  Person p = (Person) ap[1];
                  return a.category == 10
                      && ("OR".equals(p.state) || "ID".equals(p.state) || "CA".equals(p.state));
                })
            .mapValues(
                ap -> {
                  Auction a = (Auction) ap[0];
                  Person p = (Person) ap[1];
                  return row("NAME", p.name, "CITY", p.city, "STATE", p.state, "AUCTION_ID", a.id);
                })
            .to(out, toLong);
      }
      case "q5" ->
          b.stream(BID, bidsC)
              .groupByKey(Grouped.with(LONG, BID_SERDE))
              .windowedBy(
                  TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), GRACE).advanceBy(Duration.ofSeconds(2)))
              .count()
              .toStream()
              .mapValues(n -> n == null ? null : row("NUM", n))
              .to(out, Produced.with(timeWindowed, ROW));
      case "q7" -> {
        KTable<Windowed<Long>, Long> max =
            b.stream(BID, bidsC)
                .mapValues(v -> v.price)
                .groupByKey(Grouped.with(LONG, LONG))
                .windowedBy(
                    TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), finalGrace == null ? GRACE : finalGrace))
                .reduce(Math::max, Materialized.with(LONG, LONG));
        if (finalGrace != null) {
          max = max.suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()));
        }
        max.toStream()
            .mapValues(n -> n == null ? null : row("MAXPRICE", n))
            .to(out, Produced.with(timeWindowed, ROW));
      }
      case "q8" -> {
        KStream<Long, Person> people = b.stream(PERSON, Consumed.with(LONG, PERSON_SERDE));
        KStream<Long, Auction> auctions =
            b.stream(AUCTION, Consumed.with(LONG, AUCTION_SERDE)).selectKey((k, a) -> a.seller);
        people
            .join(
                auctions,
                (p, a) -> row("NAME", p.name, "RESERVE", a.reserve),
                JoinWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(10), GRACE),
                StreamJoined.with(LONG, PERSON_SERDE, AUCTION_SERDE))
            .to(out, toLong);
      }
      case "q11" ->
          b.stream(BID, bidsC)
              .selectKey((k, v) -> v.bidder)
              .groupByKey(Grouped.with(LONG, BID_SERDE))
              .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(10), GRACE))
              .count()
              .toStream()
              .mapValues(n -> n == null ? null : row("BID_COUNT", n))
              .to(out, Produced.with(sessionWindowed, ROW));
      case "q12" ->
          b.stream(BID, bidsC)
              .selectKey((k, v) -> v.bidder)
              .groupByKey(Grouped.with(LONG, BID_SERDE))
              .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), GRACE))
              .count()
              .toStream()
              .mapValues(n -> n == null ? null : row("BID_COUNT", n))
              .to(out, Produced.with(timeWindowed, ROW));
      case "q14" ->
          b.stream(BID, bidsC)
              .filter((k, v) -> 908L * v.price > 1_000_000_000L && 908L * v.price < 50_000_000_000L)
              .mapValues(
                  v -> {
                    int h = hourUTC(v.dateTime);
                    String type = h >= 8 && h <= 18 ? "dayTime" : h <= 6 || h >= 20 ? "nightTime" : "otherTime";
                    long c = 0;
                    if (v.extra != null) {
                      for (int i = 0; i < v.extra.length(); i++) if (v.extra.charAt(i) == 'c') c++;
                    }
                    return row(
                        "BIDDER", v.bidder, "PRICE", euros(v.price), "BIDTIMETYPE", type,
                        "DATETIME", v.dateTime, "EXTRA", v.extra, "C_COUNTS", v.extra == null ? null : c);
                  })
              .to(out, toLong);
      case "q17" ->
          b.stream(BID, bidsC)
              .groupBy(
                  (k, v) -> jsonKey("AUCTION", v.auction, "DAY", DAY.format(Instant.ofEpochMilli(v.dateTime))),
                  Grouped.with(Serdes.String(), BID_SERDE))
              .aggregate(
                  Stats::new,
                  (k, v, s) -> {
                    s.total++;
                    if (v.price < 10_000) s.rank1++;
                    else if (v.price < 1_000_000) s.rank2++;
                    else s.rank3++;
                    s.min = Math.min(s.min, v.price);
                    s.max = Math.max(s.max, v.price);
                    s.sum += v.price;
                    return s;
                  },
                  Materialized.with(Serdes.String(), STATS_SERDE))
              .toStream()
              .mapValues(
                  s ->
                      s == null
                          ? null
                          : row(
                              "TOTAL_BIDS", s.total, "RANK1_BIDS", s.rank1, "RANK2_BIDS", s.rank2,
                              "RANK3_BIDS", s.rank3, "MIN_PRICE", s.min, "MAX_PRICE", s.max,
                              "AVG_PRICE", (double) s.sum / s.total, "SUM_PRICE", s.sum))
              .to(out, Produced.with(Serdes.String(), ROW));
      case "q18" ->
          b.stream(BID, bidsC)
              .groupBy((k, v) -> jsonKey("BIDDER", v.bidder, "AUCTION", v.auction), Grouped.with(Serdes.String(), BID_SERDE))
              .reduce((old, v) -> v, Materialized.with(Serdes.String(), BID_SERDE))
              .toStream()
              .mapValues(
                  v ->
                      v == null
                          ? null
                          : row("PRICE", v.price, "CHANNEL", v.channel, "URL", v.url, "BID_TIME", v.dateTime))
              .to(out, Produced.with(Serdes.String(), ROW));
      case "q19" ->
          b.stream(BID, bidsC)
              .groupByKey(Grouped.with(LONG, BID_SERDE))
              .aggregate(Top::new, (k, v, t) -> t.add(v.price), Materialized.with(LONG, TOP_SERDE))
              .toStream()
              .mapValues(t -> t == null ? null : row("TOP_PRICES", t.prices))
              .to(out, toLong);
      case "q20" -> {
        KTable<Long, Auction> auctions = b.table(AUCTION, Consumed.with(LONG, AUCTION_SERDE));
        b.stream(BID, bidsC)
            .join(auctions, (v, a) -> new Object[] {v, a}, Joined.with(LONG, BID_SERDE, AUCTION_SERDE))
            .filter((k, ba) -> ((Auction) ba[1]).category == 10)
            .mapValues(
                ba -> {
                  Bid v = (Bid) ba[0];
                  Auction a = (Auction) ba[1];
                  return row(
                      "BIDDER", v.bidder, "PRICE", v.price, "CHANNEL", v.channel, "URL", v.url,
                      "B_DATETIME", v.dateTime, "ITEMNAME", a.itemName, "DESCRIPTION", a.description,
                      "INITIALBID", a.initialBid, "RESERVE", a.reserve, "EXPIRES", a.expires,
                      "SELLER", a.seller, "CATEGORY", a.category);
                })
            .to(out, toLong);
      }
      case "q21" ->
          b.stream(BID, bidsC)
              .flatMapValues(
                  v -> {
                    String ch = v.channel == null ? null : v.channel.toLowerCase(Locale.ROOT);
                    String fixed =
                        ch == null
                            ? null
                            : switch (ch) {
                              case "apple" -> "0";
                              case "google" -> "1";
                              case "facebook" -> "2";
                              case "baidu" -> "3";
                              default -> null;
                            };
                    String fromUrl = channelId(v.url);
                    if (fixed == null && fromUrl == null) return List.of();
                    return List.of(
                        row("BIDDER", v.bidder, "PRICE", v.price, "CHANNEL", v.channel,
                            "CHANNEL_ID", fixed != null ? fixed : fromUrl));
                  })
              .to(out, toLong);
      case "q22" ->
          b.stream(BID, bidsC)
              .mapValues(
                  v -> {
                    String[] parts = v.url == null ? new String[0] : v.url.split("/", -1);
                    return row(
                        "BIDDER", v.bidder, "PRICE", v.price, "CHANNEL", v.channel,
                        "DIR1", part(parts, 4), "DIR2", part(parts, 5), "DIR3", part(parts, 6));
                  })
              .to(out, toLong);
      default -> throw new IllegalArgumentException("unknown query " + query);
    }
    return b.build();
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> flags = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) flags.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    for (String f : List.of("bootstrap", "query", "app-id", "state-dir", "output")) {
      if (!flags.containsKey(f)) {
        System.err.println(
            "usage: Nexmark --bootstrap HOST:PORT --query qN --app-id ID --state-dir DIR --output TOPIC [--final-grace-ms MS]");
        System.exit(2);
      }
    }
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, flags.get("app-id"));
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, flags.get("bootstrap"));
    p.put(StreamsConfig.STATE_DIR_CONFIG, flags.get("state-dir"));
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, Integer.parseInt(flags.getOrDefault("threads", "1")));
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Integer.parseInt(flags.getOrDefault("commit-ms", "1000")));
    p.put(StreamsConfig.DEFAULT_TIMESTAMP_EXTRACTOR_CLASS_CONFIG, EventTime.class);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    Duration finalGrace =
        flags.containsKey("final-grace-ms") ? Duration.ofMillis(Long.parseLong(flags.get("final-grace-ms"))) : null;
    KafkaStreams streams = new KafkaStreams(build(flags.get("query"), flags.get("output"), finalGrace), p);
    CountDownLatch done = new CountDownLatch(1);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    streams.setUncaughtExceptionHandler(
        e -> {
          failed.set(e);
          done.countDown();
          return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    // The driver closes our standard input once the input is drained.
    Thread stdin =
        new Thread(
            () -> {
              try {
                while (System.in.read() >= 0) {}
              } catch (Exception e) {
                // closed
              }
              done.countDown();
            });
    stdin.setDaemon(true);
    stdin.start();
    streams.start();
    done.await();
    streams.close(Duration.ofSeconds(60));
    if (failed.get() != null) {
      failed.get().printStackTrace();
      System.exit(1);
    }
    System.out.println("{\"peak_rss_bytes\":" + peakRSS() + "}");
    System.out.flush();
    System.exit(0);
  }

  /** The process's peak resident set (VmHWM), 0 if unknown. */
  static long peakRSS() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmHWM:")) {
          return Long.parseLong(line.substring(6).trim().replace(" kB", "").trim()) * 1024;
        }
      }
    } catch (Exception e) {
      // unknown
    }
    return 0;
  }

  private Nexmark() {}
}
