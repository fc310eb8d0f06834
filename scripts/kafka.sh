# shellcheck shell=bash
# A single-node Apache Kafka 4.x (KRaft, broker + controller in one JVM)
# for one instance folder, on 127.0.0.1:$NCMP_BROKER_PORT.
#
# The jars come from Maven Central through scripts/kafka/pom.xml and are
# cached in $NCMP_BROKER_JARS, so only the first run needs the network.

NCMP_BROKER_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$NCMP_ROOT/scripts/kafka/pom.xml")

kafka_bootstrap() { printf '127.0.0.1:%s\n' "$NCMP_BROKER_PORT"; }

kafka_fetch() {
    local stamp="$NCMP_BROKER_JARS/.complete"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$NCMP_BROKER_VERSION" ]; then
        return 0
    fi
    command -v mvn >/dev/null || die "Kafka cannot start: Maven (mvn) is missing (Debian package maven)"
    info "fetching Apache Kafka $NCMP_BROKER_VERSION jars (once; cached in $NCMP_BROKER_JARS)"
    rm -rf "$NCMP_BROKER_JARS"
    mkdir -p "$NCMP_LOCAL"
    if ! mvn -q -B -f "$NCMP_ROOT/scripts/kafka/pom.xml" package \
        -Djars.dir="$NCMP_BROKER_JARS" >"$NCMP_LOCAL/kafka-fetch.log" 2>&1; then
        die "Kafka cannot start: download of the broker jars refused or failed (see $NCMP_LOCAL/kafka-fetch.log)"
    fi
    rm -rf "$NCMP_ROOT/scripts/kafka/target"
    printf '%s\n' "$NCMP_BROKER_VERSION" >"$stamp"
}

_kafka_java() {
    local v
    command -v java >/dev/null || die "Kafka cannot start: Java is missing (Debian package openjdk-17-jre-headless)"
    v=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
    [ -n "$v" ] && [ "$v" -ge 17 ] || die "Kafka cannot start: Java 17 or newer is needed (found ${v:-unknown})"
}

kafka_start() {
    local dir="$NCMP_INSTANCE_DIR/kafka" pidfile="$NCMP_INSTANCE_DIR/kafka.pid" cid rc
    if pid_alive "$pidfile"; then
        info "Kafka already running (pid $(cat "$pidfile")) on $(kafka_bootstrap)"
        return 0
    fi
    _kafka_java
    for p in "$NCMP_BROKER_PORT" "$NCMP_BROKER_CONTROLLER_PORT"; do
        port_in_use "$p" && die "Kafka cannot start: $(port_taken "$p") (set NCMP_BROKER_PORT / NCMP_BROKER_CONTROLLER_PORT)"
    done
    port_check_range "$NCMP_BROKER_PORT" "$NCMP_BROKER_CONTROLLER_PORT"
    kafka_fetch
    mkdir -p "$dir"
    cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$NCMP_BROKER_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$NCMP_BROKER_PORT,CONTROLLER://127.0.0.1:$NCMP_BROKER_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$NCMP_BROKER_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=6
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# a reference registration request of 2,000 handles is about 1.1 MB
message.max.bytes=16777216
replica.fetch.max.bytes=16777216
log.retention.hours=24
PROPS
    cat >"$dir/log4j2.properties" <<'PROPS'
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.out.ref = OUT
logger.kafka.name = kafka
logger.kafka.level = warn
logger.started.name = kafka.server.KafkaRaftServer
logger.started.level = info
logger.apache.name = org.apache.kafka
logger.apache.level = warn
PROPS
    if [ ! -f "$dir/data/meta.properties" ]; then
        cid=$(java -cp "$NCMP_BROKER_JARS/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)
        java -cp "$NCMP_BROKER_JARS/*" kafka.tools.StorageTool format -t "$cid" \
            -c "$dir/server.properties" --standalone >"$dir/format.log" 2>&1 ||
            die "Kafka cannot start: formatting the storage failed (see $dir/format.log)"
    fi
    # setsid: the broker gets its own session so that a terminal's ^C
    # reaches only ./run, which then stops it by pid.
    # The heap at its full size from the start: grown from 256 MB, G1's
    # concurrent marking ran again and again as the heap filled, about a
    # CPU-second per 50,000 registrations on two cores (bench registration
    # at half its throughput). NCMP_BROKER_JVM_OPTS replaces these options.
    # shellcheck disable=SC2086 # the options are words
    setsid java ${NCMP_BROKER_JVM_OPTS:--Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20} -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$dir/log4j2.properties" \
        -cp "$NCMP_BROKER_JARS/*" kafka.Kafka "$dir/server.properties" \
        >"$dir/kafka.log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    wait_port "$NCMP_BROKER_PORT" 120 "$pidfile"
    rc=$?
    if [ $rc -ne 0 ]; then
        local why
        why=$(grep -m1 -E 'ERROR|Exception' "$dir/kafka.log" | cut -c1-200)
        stop_pidfile "$pidfile" Kafka 5
        [ $rc -eq 2 ] && die "Kafka cannot start: the broker exited: ${why:-see $dir/kafka.log}"
        die "Kafka cannot start: no answer on port $NCMP_BROKER_PORT within 120s (see $dir/kafka.log)"
    fi
    info "Kafka $NCMP_BROKER_VERSION ready on $(kafka_bootstrap) (pid $(cat "$pidfile"))"
}

kafka_stop() {
    stop_pidfile "$NCMP_INSTANCE_DIR/kafka.pid" Kafka 60
}

# kafka_purge: remove the broker's data (stopped first); its log stays.
kafka_purge() {
    kafka_stop
    rm -rf "$NCMP_INSTANCE_DIR/kafka/data"
}
