#!/usr/bin/env bash
# Creates Tally's topics (docs/design.md) in docker-compose's kafka-init service.
# ./tally up creates the same set from infra/tally/components/kafka.py; a unit test keeps
# the two lists equal.
set -euo pipefail
bootstrap="${KAFKA_BOOTSTRAP:-kafka:9092}"
partitions="${TALLY_TOPIC_PARTITIONS:-3}"
week=$((7 * 24 * 3600 * 1000))
topics=/opt/kafka/bin/kafka-topics.sh
create() { "$topics" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$1" --partitions "$2" --replication-factor 1 "${@:3}"; }
create tally.counter.events     "$partitions" --config retention.ms=$week --config message.timestamp.type=LogAppendTime
create tally.timeseries.events  "$partitions" --config retention.ms=$week
create tally.deadletter         "$partitions" --config retention.ms=$((4 * week))
create tally.counter.rollups    "$partitions" --config cleanup.policy=compact --config min.cleanable.dirty.ratio=0.1 --config segment.ms=600000
create tally.alerts             "$partitions"
create tally.control.namespaces 1 --config cleanup.policy=compact
create _schemas                 1 --config cleanup.policy=compact
