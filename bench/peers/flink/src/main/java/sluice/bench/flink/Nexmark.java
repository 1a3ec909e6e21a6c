package sluice.bench.flink;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * The Nexmark queries of bench/nexmark (queries.go) as Flink SQL, run in a
 * local mini-cluster with RocksDB state. The sources are bounded at the end
 * offsets the topics have when the job starts, so the job ends once it has
 * drained them. Each query writes rows with the column names of Sluice's
 * output; windowed results carry their window in a JSON key (key,
 * window_start[, window_end] in epoch milliseconds, a session's end being
 * its last event's time as in Kafka Streams), updating ones go through
 * upsert-kafka.
 *
 * <p>Usage: Nexmark --bootstrap HOST:PORT --query qN --app-id ID --state-dir DIR --output TOPIC
 * [--final-grace-ms MS]
 *
 * <p>With --final-grace-ms (the driver's latency mode) the sources are
 * unbounded and the job runs until standard input is closed, then is
 * cancelled; the watermark is MS + 1 milliseconds behind the largest
 * dateTime read, so that a window [start, end), which fires once the
 * watermark reaches end - 1, closes when an event of time end + MS or later
 * has been read on every partition (the source's watermark is the least of
 * its partitions').
 */
public final class Nexmark {
  private Nexmark() {}

  /**
   * A Kafka source table. Without finalGrace it is bounded at the end offsets
   * found at the start and its watermark is 1 s behind; with it, unbounded,
   * and its watermark finalGrace + 1 ms behind.
   */
  static String source(String name, String topic, String columns, String bootstrap, String group, Long finalGrace) {
    String delay =
        finalGrace == null
            ? "INTERVAL '1' SECOND"
            : String.format(Locale.ROOT, "INTERVAL '%d.%03d' SECOND", (finalGrace + 1) / 1000, (finalGrace + 1) % 1000);
    return "CREATE TABLE "
        + name
        + " ("
        + columns
        + ", ts AS TO_TIMESTAMP_LTZ(`dateTime`, 3), WATERMARK FOR ts AS ts - "
        + delay
        + ") WITH ("
        + "'connector' = 'kafka', 'topic' = '"
        + topic
        + "', 'properties.bootstrap.servers' = '"
        + bootstrap
        + "', 'properties.group.id' = '"
        + group
        + "', 'scan.startup.mode' = 'earliest-offset',"
        + (finalGrace == null ? " 'scan.bounded.mode' = 'latest-offset'," : "")
        + " 'format' = 'json')";
  }

  /** An append-only sink keyed by the BIGINT column `key` (8 bytes, big-endian). */
  static String appendSink(String topic, String bootstrap, String columns) {
    return "CREATE TABLE sink (`key` BIGINT, "
        + columns
        + ") WITH ('connector' = 'kafka', 'topic' = '"
        + topic
        + "', 'properties.bootstrap.servers' = '"
        + bootstrap
        + "', 'key.format' = 'raw', 'key.fields' = 'key', 'value.format' = 'json',"
        + " 'value.fields-include' = 'EXCEPT_KEY', 'value.json.encode.decimal-as-plain-number' = 'true',"
        + " 'sink.delivery-guarantee' = 'at-least-once')";
  }

  /** An append-only sink keyed by a JSON object of keyFields. */
  static String jsonKeyedSink(String topic, String bootstrap, String columns, String keyFields) {
    return "CREATE TABLE sink ("
        + columns
        + ") WITH ('connector' = 'kafka', 'topic' = '"
        + topic
        + "', 'properties.bootstrap.servers' = '"
        + bootstrap
        + "', 'key.format' = 'json', 'key.fields' = '"
        + keyFields
        + "', 'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY',"
        + " 'sink.delivery-guarantee' = 'at-least-once')";
  }

  /** An upsert-kafka sink; columns must declare the primary key. */
  static String upsertSink(String topic, String bootstrap, String columns, String keyFormat) {
    return "CREATE TABLE sink ("
        + columns
        + ") WITH ('connector' = 'upsert-kafka', 'topic' = '"
        + topic
        + "', 'properties.bootstrap.servers' = '"
        + bootstrap
        + "', 'key.format' = '"
        + keyFormat
        + "', 'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY')";
  }

  /** Epoch milliseconds of a window bound (whole seconds, as every window here is). */
  static String millis(String col) {
    return "CAST(TIMESTAMPDIFF(SECOND, TIMESTAMP '1970-01-01 00:00:00', " + col + ") AS BIGINT) * 1000";
  }

  /** The sink DDL and the INSERT of each query. */
  static List<String> query(String q, String out, String bs) {
    String bidCols = "`key` BIGINT, BIDDER BIGINT, PRICE BIGINT, CHANNEL STRING";
    return switch (q) {
      case "q0" -> List.of(
          appendSink(out, bs, "BIDDER BIGINT, PRICE BIGINT, `DATETIME` BIGINT, EXTRA STRING"),
          "INSERT INTO sink SELECT auction, bidder, price, `dateTime`, extra FROM bid");
      case "q1" -> List.of(
          appendSink(out, bs, "BIDDER BIGINT, PRICE DECIMAL(23, 3), `DATETIME` BIGINT, EXTRA STRING"),
          "INSERT INTO sink SELECT auction, bidder, 0.908 * price, `dateTime`, extra FROM bid");
      case "q2" -> List.of(
          appendSink(out, bs, "PRICE BIGINT"),
          "INSERT INTO sink SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0");
      case "q3" -> List.of(
          appendSink(out, bs, "NAME STRING, CITY STRING, STATE STRING, AUCTION_ID BIGINT"),
          "INSERT INTO sink SELECT a.seller, p.name, p.city, p.state, a.id FROM auction a JOIN person p"
              + " ON a.seller = p.id WHERE a.category = 10 AND p.state IN ('OR', 'ID', 'CA')");
      case "q5" -> List.of(
          jsonKeyedSink(out, bs, "`key` BIGINT, window_start BIGINT, NUM BIGINT", "key;window_start"),
          "INSERT INTO sink SELECT auction, " + millis("window_start") + ", COUNT(*) FROM TABLE("
              + "HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))"
              + " GROUP BY auction, window_start, window_end");
      case "q7" -> List.of(
          jsonKeyedSink(out, bs, "`key` BIGINT, window_start BIGINT, MAXPRICE BIGINT", "key;window_start"),
          "INSERT INTO sink SELECT auction, " + millis("window_start") + ", MAX(price) FROM TABLE("
              + "TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
              + " GROUP BY auction, window_start, window_end");
      case "q8" -> List.of(
          appendSink(out, bs, "NAME STRING, RESERVE BIGINT"),
          "INSERT INTO sink SELECT p.id, p.name, a.reserve FROM person p JOIN auction a ON p.id = a.seller"
              + " AND a.ts BETWEEN p.ts - INTERVAL '10' SECOND AND p.ts + INTERVAL '10' SECOND");
      case "q11" -> List.of(
          jsonKeyedSink(out, bs, "`key` BIGINT, window_start BIGINT, window_end BIGINT, BID_COUNT BIGINT",
              "key;window_start;window_end"),
          "INSERT INTO sink SELECT bidder, MIN(`dateTime`), MAX(`dateTime`), COUNT(*) FROM TABLE("
              + "SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
              + " GROUP BY bidder, window_start, window_end");
      case "q12" -> List.of(
          jsonKeyedSink(out, bs, "`key` BIGINT, window_start BIGINT, BID_COUNT BIGINT", "key;window_start"),
          "INSERT INTO sink SELECT bidder, " + millis("window_start") + ", COUNT(*) FROM TABLE("
              + "TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
              + " GROUP BY bidder, window_start, window_end");
      case "q14" -> List.of(
          appendSink(out, bs, "BIDDER BIGINT, PRICE DECIMAL(23, 3), BIDTIMETYPE STRING, `DATETIME` BIGINT,"
              + " EXTRA STRING, C_COUNTS INT"),
          "INSERT INTO sink SELECT auction, bidder, 0.908 * price, CASE"
              + " WHEN HOUR(CAST(ts AS TIMESTAMP(3))) >= 8 AND HOUR(CAST(ts AS TIMESTAMP(3))) <= 18 THEN 'dayTime'"
              + " WHEN HOUR(CAST(ts AS TIMESTAMP(3))) <= 6 OR HOUR(CAST(ts AS TIMESTAMP(3))) >= 20 THEN 'nightTime'"
              + " ELSE 'otherTime' END, `dateTime`, extra,"
              + " CHAR_LENGTH(extra) - CHAR_LENGTH(REPLACE(extra, 'c', ''))"
              + " FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000");
      case "q17" -> List.of(
          upsertSink(out, bs, "AUCTION BIGINT, `DAY` STRING, TOTAL_BIDS BIGINT, RANK1_BIDS INT, RANK2_BIDS INT,"
              + " RANK3_BIDS INT, MIN_PRICE BIGINT, MAX_PRICE BIGINT, AVG_PRICE DOUBLE, SUM_PRICE BIGINT,"
              + " PRIMARY KEY (AUCTION, `DAY`) NOT ENFORCED", "json"),
          "INSERT INTO sink SELECT auction, DATE_FORMAT(CAST(ts AS TIMESTAMP(3)), 'yyyy-MM-dd'), COUNT(*),"
              + " SUM(CASE WHEN price < 10000 THEN 1 ELSE 0 END),"
              + " SUM(CASE WHEN price >= 10000 AND price < 1000000 THEN 1 ELSE 0 END),"
              + " SUM(CASE WHEN price >= 1000000 THEN 1 ELSE 0 END),"
              + " MIN(price), MAX(price), AVG(CAST(price AS DOUBLE)), SUM(price)"
              + " FROM bid GROUP BY auction, DATE_FORMAT(CAST(ts AS TIMESTAMP(3)), 'yyyy-MM-dd')");
      case "q18" -> List.of(
          upsertSink(out, bs, "BIDDER BIGINT, AUCTION BIGINT, PRICE BIGINT, CHANNEL STRING, URL STRING,"
              + " BID_TIME BIGINT, PRIMARY KEY (BIDDER, AUCTION) NOT ENFORCED", "json"),
          "INSERT INTO sink SELECT bidder, auction, LAST_VALUE(price), LAST_VALUE(channel), LAST_VALUE(url),"
              + " LAST_VALUE(`dateTime`) FROM bid GROUP BY bidder, auction");
      case "q19" -> List.of(
          upsertSink(out, bs, "`key` BIGINT, TOP_PRICES ARRAY<BIGINT>, PRIMARY KEY (`key`) NOT ENFORCED", "raw"),
          "INSERT INTO sink SELECT auction, ARRAY_SORT(ARRAY_AGG(price), FALSE) FROM ("
              + " SELECT auction, price FROM (SELECT auction, price,"
              + " ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bid) WHERE rn <= 10)"
              + " GROUP BY auction");
      case "q20" -> List.of(
          appendSink(out, bs, "BIDDER BIGINT, PRICE BIGINT, CHANNEL STRING, URL STRING, B_DATETIME BIGINT,"
              + " ITEMNAME STRING, DESCRIPTION STRING, INITIALBID BIGINT, RESERVE BIGINT, EXPIRES BIGINT,"
              + " SELLER BIGINT, CATEGORY BIGINT"),
          "INSERT INTO sink SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.`dateTime`, a.itemName,"
              + " a.description, a.initialBid, a.reserve, a.expires, a.seller, a.category"
              + " FROM bid b JOIN auction a ON b.auction = a.id WHERE a.category = 10");
      case "q21" -> List.of(
          appendSink(out, bs, "BIDDER BIGINT, PRICE BIGINT, CHANNEL STRING, CHANNEL_ID STRING"),
          "INSERT INTO sink SELECT auction, bidder, price, channel, CASE"
              + " WHEN LOWER(channel) = 'apple' THEN '0' WHEN LOWER(channel) = 'google' THEN '1'"
              + " WHEN LOWER(channel) = 'facebook' THEN '2' WHEN LOWER(channel) = 'baidu' THEN '3'"
              + " ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) END FROM bid"
              + " WHERE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) IS NOT NULL"
              + " OR LOWER(channel) IN ('apple', 'google', 'facebook', 'baidu')");
      case "q22" -> List.of(
          appendSink(out, bs, "BIDDER BIGINT, PRICE BIGINT, CHANNEL STRING, DIR1 STRING, DIR2 STRING, DIR3 STRING"),
          "INSERT INTO sink SELECT auction, bidder, price, channel, SPLIT_INDEX(url, '/', 3),"
              + " SPLIT_INDEX(url, '/', 4), SPLIT_INDEX(url, '/', 5) FROM bid");
      default -> throw new IllegalArgumentException("unknown query " + q);
    };
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
    String bs = flags.get("bootstrap");
    String group = flags.get("app-id");
    Long finalGrace = flags.containsKey("final-grace-ms") ? Long.parseLong(flags.get("final-grace-ms")) : null;
    Path dir = Path.of(flags.get("state-dir")).toAbsolutePath();
    Configuration conf = new Configuration();
    conf.setString("state.backend.type", "rocksdb");
    conf.setString("execution.checkpointing.interval", flags.getOrDefault("checkpoint-interval", "10s"));
    conf.setString("execution.checkpointing.dir", dir.resolve("checkpoints").toUri().toString());
    conf.setString("state.checkpoints.dir", dir.resolve("checkpoints").toUri().toString());
    conf.setString("io.tmp.dirs", dir.toString());
    conf.setString("parallelism.default", flags.getOrDefault("parallelism", "1"));
    conf.setString("table.local-time-zone", "UTC");
    TableEnvironment t =
        TableEnvironment.create(EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
    t.executeSql(source("person", "nexmark-person",
        "id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING, state STRING,"
            + " `dateTime` BIGINT, extra STRING", bs, group, finalGrace));
    t.executeSql(source("auction", "nexmark-auction",
        "id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT, `dateTime` BIGINT,"
            + " expires BIGINT, seller BIGINT, category BIGINT, extra STRING", bs, group, finalGrace));
    t.executeSql(source("bid", "nexmark-bid",
        "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, `dateTime` BIGINT,"
            + " extra STRING", bs, group, finalGrace));
    List<String> stmts = query(flags.get("query"), flags.get("output"), bs);
    t.executeSql(stmts.get(0));
    TableResult insert = t.executeSql(stmts.get(1));
    if (finalGrace == null) {
      insert.await();
    } else {
      runUntilStdinCloses(insert);
    }
    System.out.println("{\"peak_rss_bytes\":" + peakRSS() + "}");
    System.out.flush();
    System.exit(0);
  }

  /**
   * Waits for standard input to close, then cancels the unbounded job; a job
   * that ends before (it failed) ends the process with status 1.
   */
  static void runUntilStdinCloses(TableResult insert) throws Exception {
    AtomicBoolean stopping = new AtomicBoolean();
    Thread watch =
        new Thread(
            () -> {
              Exception failure = null;
              try {
                insert.await();
              } catch (Exception e) {
                failure = e;
              }
              if (stopping.get()) return;
              if (failure != null) failure.printStackTrace();
              else System.err.println("nexmark flink: the job ended before it was stopped");
              System.exit(1);
            });
    watch.setDaemon(true);
    watch.start();
    while (System.in.read() >= 0) {}
    stopping.set(true);
    insert.getJobClient().ifPresent(c -> {
      try {
        c.cancel().get(60, TimeUnit.SECONDS);
      } catch (Exception e) {
        // the process exits anyway
      }
    });
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
}
