package io.tally.sql.catalog;

import java.util.Map;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.GenericInMemoryCatalog;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.exceptions.CatalogException;

/**
 * The {@code tally} catalog: Tally's tables ({@link TallyTables}) in its default database, made
 * when it opens, so every SQL session starts with them. Like Flink's in-memory catalog it also
 * holds what a session creates (views, its own tables) for that session's life.
 */
public final class TallyCatalog extends GenericInMemoryCatalog {
    public static final String DEFAULT_DATABASE = "default_database";

    private final TallyTables tables;

    public TallyCatalog(String name, TallyTables tables) {
        super(name, DEFAULT_DATABASE);
        this.tables = tables;
    }

    @Override
    public void open() {
        super.open();
        for (Map.Entry<String, CatalogTable> t : tables.all().entrySet()) {
            try {
                createTable(new ObjectPath(DEFAULT_DATABASE, t.getKey()), t.getValue(), true);
            } catch (Exception e) {
                throw new CatalogException("cannot define table " + t.getKey() + ": " + e.getMessage(), e);
            }
        }
    }
}
