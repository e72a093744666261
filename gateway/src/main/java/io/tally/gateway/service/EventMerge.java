package io.tally.gateway.service;

import io.tally.gateway.service.ItemRows.ItemRow;
import io.tally.gateway.service.TimeSeriesQueries.Event;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;

/**
 * The events of one time bucket, newest first (event_time DESC, event_id ASC, the slice tables'
 * clustering order), from its event buckets: each partition's rows are grouped into events and
 * the partitions merged k-way, so the merge reads only as far into each partition as the page
 * it fills needs.
 */
final class EventMerge implements Iterator<Event> {
    /** Newest first; at one time, event ids ascending. */
    static final Comparator<Event> ORDER =
            Comparator.comparingLong(Event::timeMicros).reversed().thenComparing(Event::eventId);

    /** One partition's rows grouped into events (an event's rows are adjacent: same time and id). */
    static final class Events {
        private final Iterator<ItemRow> rows;
        private ItemRow ahead;
        private Event head;

        Events(Iterator<ItemRow> rows) {
            this.rows = rows;
        }

        /** The next event without taking it; null when the partition has no more. */
        Event peek() {
            if (head == null) {
                ItemRow r = ahead != null ? ahead : rows.hasNext() ? rows.next() : null;
                ahead = null;
                if (r == null) {
                    return null;
                }
                Event e = new Event(r.timeMicros(), r.eventId(), new ArrayList<>());
                add(e, r);
                while (rows.hasNext()) {
                    ItemRow next = rows.next();
                    if (next.timeMicros() == e.timeMicros() && next.eventId().equals(e.eventId())) {
                        add(e, next);
                    } else {
                        ahead = next;
                        break;
                    }
                }
                head = e;
            }
            return head;
        }

        Event take() {
            Event e = peek();
            head = null;
            return e;
        }

        private static void add(Event e, ItemRow r) {
            if (!r.itemKey().isEmpty()) { // "" marks an event stored without items
                e.items().add(Map.entry(r.itemKey(), r.value()));
            }
        }
    }

    private final PriorityQueue<Events> heads = new PriorityQueue<>((a, b) -> ORDER.compare(a.peek(), b.peek()));

    EventMerge(List<Iterator<ItemRow>> partitions) {
        for (Iterator<ItemRow> p : partitions) {
            Events events = new Events(p);
            if (events.peek() != null) {
                heads.add(events);
            }
        }
    }

    @Override
    public boolean hasNext() {
        return !heads.isEmpty();
    }

    @Override
    public Event next() {
        Events top = heads.poll();
        if (top == null) {
            throw new NoSuchElementException();
        }
        Event e = top.take();
        if (top.peek() != null) {
            heads.add(top);
        }
        return e;
    }
}
