package io.tally.sql.format;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/** The options of the {@code tally-avro} format (given as {@code tally-avro.<key>} or {@code value.tally-avro.<key>}). */
public final class TallyAvroOptions {
    public static final ConfigOption<String> URL = ConfigOptions.key("url")
            .stringType()
            .noDefaultValue()
            .withDescription("Base URL of Tally's schema registry (Confluent's REST API), e.g. http://127.0.0.1:8081.");

    public static final ConfigOption<String> SUBJECT = ConfigOptions.key("subject")
            .stringType()
            .noDefaultValue()
            .withDescription("The registry subject of the records, usually '<topic>-value'. Reads resolve every"
                    + " writer schema to the table's columns taken from the subject's newest version (so"
                    + " enums and defaults follow Avro's rules); without it the reader schema is derived"
                    + " from the column types. Writes need it: a row is encoded with the subject's newest"
                    + " registered schema and that schema's id.");

    public static final ConfigOption<String> TOKEN = ConfigOptions.key("token")
            .stringType()
            .noDefaultValue()
            .withDescription("Bearer token sent to the registry (its admin token), for a registry that asks one"
                    + " of writers. Reads need none.");

    public static final ConfigOption<Boolean> IGNORE_PARSE_ERRORS = ConfigOptions.key("ignore-parse-errors")
            .booleanType()
            .defaultValue(false)
            .withDescription("Skip a record that does not decode (not in the wire format, an unknown schema id,"
                    + " bytes that do not match their schema) instead of failing the query; each skip is"
                    + " logged. Tally's catalog sets it: its jobs have dead-lettered such records already.");

    private TallyAvroOptions() {}
}
