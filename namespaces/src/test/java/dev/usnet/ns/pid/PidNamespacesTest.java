package dev.usnet.ns.pid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** alloc_pid over nested pid namespaces in the multilevel and the flat model: numbers per level, reuse, limits, lookups. */
class PidNamespacesTest {
    private static final int BIG = PidNamespace.PID_MAX_DEFAULT;

    private static List<Integer> nrs(Task t) {
        return t.pids().stream().map(Upid::nr).toList();
    }

    @Test
    void aMultilevelProcessHasANumberAtEveryLevelAndEachInitIsOneInItsOwn() throws Exception {
        PidAllocator pids = new PidAllocator(BIG);
        PidNsChain chain = PidNsChain.create(pids, "ctr", PidModel.MULTILEVEL, 3, BIG);
        assertEquals(List.of(1), nrs(pids.initTask()));
        // Each level's init: 1 in its own namespace, the next free number in every namespace above.
        assertEquals(List.of(2, 1), nrs(chain.inits().get(0)));
        assertEquals(List.of(3, 2, 1), nrs(chain.inits().get(1)));
        assertEquals(List.of(4, 3, 2, 1), nrs(chain.inits().get(2)));
        Task app = chain.spawn("app");
        assertEquals(List.of(5, 4, 3, 2), nrs(app));
        assertEquals(2, app.getpid());
        List<PidNamespace> levels = chain.levels();
        for (int l = 0; l < levels.size(); l++) {
            assertEquals(nrs(app).get(l), app.pidIn(levels.get(l)), "level " + l);
            assertEquals(levels.get(l).name(), app.pids().get(l).ns().name());
        }
        assertEquals(List.of("init", "ctr/1", "ctr/2", "ctr/3"), levels.stream().map(PidNamespace::name).toList());
        // Another container's namespace does not see it.
        PidNsChain other = PidNsChain.create(pids, "other", PidModel.MULTILEVEL, 1, BIG);
        assertEquals(0, app.pidIn(other.innermost()));
    }

    @Test
    void lookupsAreInTheAskersOwnNamespace() throws Exception {
        PidAllocator pids = new PidAllocator(BIG);
        PidNsChain chain = PidNsChain.create(pids, "ctr", PidModel.MULTILEVEL, 2, BIG);
        Task a = chain.spawn("a");
        Task b = chain.spawn("b");
        assertSame(b, a.findByVpid(b.getpid()), "find_task_by_vpid in a's namespace");
        assertSame(chain.inits().get(1), a.findByVpid(1), "pid 1 is the innermost init for a");
        assertSame(pids.initTask(), pids.findTask(pids.initNs(), 1), "and the initial init in the initial namespace");
        assertSame(b, pids.findTask(pids.initNs(), b.pid().globalNr()));
        // b's global number means something else (or nothing) inside.
        assertTrue(a.findByVpid(b.pid().globalNr()) != b);
        assertNull(a.findByVpid(999));
    }

    @Test
    void aReapedPidIsFreeButComesBackOnlyAfterTheCursorWraps() throws Exception {
        PidAllocator pids = new PidAllocator(BIG);
        PidNsChain chain = PidNsChain.create(pids, "ctr", PidModel.MULTILEVEL, 1, PidNamespace.PID_MAX_MIN + 9);
        Task spawner = chain.spawn("spawner");
        assertEquals(2, spawner.getpid());
        Task c = spawner.fork("child");
        assertEquals(3, c.getpid());
        c.exit(0);
        assertEquals(Task.State.ZOMBIE, c.state(), "a zombie until its parent waits");
        assertSame(c, spawner.findByVpid(3), "a zombie keeps its pid");
        spawner.reap(c);
        assertEquals(Task.State.DEAD, c.state());
        assertNull(spawner.findByVpid(3));
        assertEquals(4, spawner.fork("next").getpid(), "not 3 again: the cursor moves on");
        // Fill up to pid_max - 1 (310), then the cursor wraps to RESERVED_PIDS (300), not to 1.
        List<Task> kids = new ArrayList<>();
        for (int want = 5; want <= 309; want++) {
            kids.add(spawner.fork("k" + want));
        }
        assertEquals(309, kids.getLast().getpid());
        Task k300 = kids.get(300 - 5);
        Task k7 = kids.get(7 - 5);
        k300.exit(0);
        spawner.reap(k300);
        k7.exit(0);
        spawner.reap(k7);
        assertEquals(300, spawner.fork("wrapped").getpid(), "after the wrap the search starts at RESERVED_PIDS");
        PidAllocException e = assertThrows(PidAllocException.class, () -> spawner.fork("more"));
        assertEquals("EAGAIN", e.errno(), "7 is free but below RESERVED_PIDS once the cursor has passed it");
        assertTrue(e.getMessage().contains("ctr/1") && e.getMessage().contains("pid_max 310"), e.getMessage());
    }

    @Test
    void exhaustionAtAnOuterLevelFreesWhatTheInnerLevelsReserved() throws Exception {
        PidAllocator pids = new PidAllocator(PidNamespace.PID_MAX_MIN);
        PidNsChain chain = PidNsChain.create(pids, "ctr", PidModel.MULTILEVEL, 2, BIG);
        PidNamespace inner = chain.innermost();
        PidNamespace middle = chain.levels().get(1);
        int before = pids.initNs().pidAllocated();
        List<Task> filler = new ArrayList<>();
        for (int i = before; i < PidNamespace.PID_MAX_MIN - 1; i++) {
            filler.add(pids.initTask().fork("f" + i));
        }
        assertEquals(PidNamespace.PID_MAX_MIN - 1, pids.initNs().pidAllocated(), "1..300 taken");
        int innerBefore = inner.pidAllocated();
        int middleBefore = middle.pidAllocated();
        PidAllocException e = assertThrows(PidAllocException.class, () -> chain.spawn("app"));
        assertEquals("EAGAIN", e.errno());
        assertTrue(e.getMessage().contains("pid namespace init (level 0)"), e.getMessage());
        assertEquals(innerBefore, inner.pidAllocated());
        assertEquals(middleBefore, middle.pidAllocated());
        assertEquals(-1, inner.idr.nextFilled(innerBefore + 1), "no half-made pid left behind");
        filler.getFirst().exit(0);
        assertEquals("EAGAIN", assertThrows(PidAllocException.class, () -> chain.spawn("app")).errno(),
                "the freed global 4 is below RESERVED_PIDS, where a wrapped cursor no longer looks");
        filler.getLast().exit(0);
        Task app = chain.spawn("app");
        assertEquals(300, app.pid().globalNr(), "the freed global 300 is taken");
        assertEquals(4, app.getpid(), "inside, the failed attempts moved the cursor on (2 and 3 were reserved and freed)");
    }

    @Test
    void anInitsExitTakesItsWholeNamespaceAndClosesIt() throws Exception {
        PidAllocator pids = new PidAllocator(BIG);
        PidNsChain chain = PidNsChain.create(pids, "ctr", PidModel.MULTILEVEL, 3, BIG);
        Task app = chain.spawn("app");
        Task child = app.fork("child");
        assertEquals(6, pids.initNs().pidAllocated(), "init, three inits, app, child, and nothing else");
        chain.shutdown();
        assertEquals(1, pids.initNs().pidAllocated(), "only the initial init is left");
        assertEquals(Task.State.DEAD, app.state());
        assertEquals(Task.State.DEAD, child.state());
        for (PidNamespace l : chain.levels().subList(1, 4)) {
            assertEquals(0, l.pidAllocated(), l.name());
            assertTrue(!l.isAdding(), l.name());
        }
        PidAllocException e = assertThrows(PidAllocException.class, () -> chain.spawn("late"));
        assertEquals("ENOMEM", e.errno());
    }

    @Test
    void anOrphanGoesToItsNamespacesInitWhichReapsIt() throws Exception {
        PidAllocator pids = new PidAllocator(BIG);
        PidNsChain chain = PidNsChain.create(pids, "ctr", PidModel.MULTILEVEL, 1, BIG);
        Task parent = chain.spawn("parent");
        Task orphan = parent.fork("orphan");
        parent.exit(0);
        assertEquals(Task.State.DEAD, parent.state(), "its parent is the init, which reaps at once");
        assertSame(chain.inits().getFirst(), orphan.parent());
        orphan.exit(3);
        assertEquals(Task.State.DEAD, orphan.state());
        assertEquals(3, orphan.exitCode());
    }

    @Test
    void namespacesNestNoDeeperThanMaxPidNsLevel() throws Exception {
        PidAllocator pids = new PidAllocator(BIG);
        assertEquals(PidNamespace.MAX_PID_NS_LEVEL, PidNsChain.create(pids, "deep", PidModel.FLAT, 32, BIG).innermost().level());
        PidAllocException e = assertThrows(PidAllocException.class,
                () -> PidNsChain.create(pids, "deeper", PidModel.MULTILEVEL, 33, BIG));
        assertEquals("ENOSPC", e.errno());
        assertEquals(1 + 32, pids.initNs().pidAllocated(), "the 32 levels made before the refusal were taken down again");
    }

    /** Runs one script of spawns, exits and reaps in a chain of {@code model}; returns every process made. */
    private static List<Task> script(PidAllocator pids, PidModel model) throws Exception {
        PidNsChain a = PidNsChain.create(pids, "a", model, 3, BIG);
        PidNsChain b = PidNsChain.create(pids, "b", model, 2, BIG);
        List<Task> all = new ArrayList<>();
        Task sa = a.spawn("spawner");
        Task sb = b.spawn("spawner");
        all.add(sa);
        all.add(sb);
        for (int i = 0; i < 50; i++) {
            Task c = (i % 3 == 0 ? sb : sa).fork("c" + i);
            all.add(c);
            if (i % 4 != 1) {
                c.exit(0);
                (i % 3 == 0 ? sb : sa).reap(c);
            }
        }
        return all;
    }

    @Test
    void flatAndMultilevelGiveTheSameGetpidAndGlobalPidButFlatNumbersNothingBetween() throws Exception {
        PidAllocator m = new PidAllocator(BIG);
        PidAllocator f = new PidAllocator(BIG);
        List<Task> ml = script(m, PidModel.MULTILEVEL);
        List<Task> fl = script(f, PidModel.FLAT);
        for (int i = 0; i < ml.size(); i++) {
            Task x = ml.get(i);
            Task y = fl.get(i);
            assertEquals(x.getpid(), y.getpid(), "getpid of process " + i);
            assertEquals(x.pid().globalNr(), y.pid().globalNr(), "global pid of process " + i);
            assertEquals(x.pidIn(m.initNs()), y.pidIn(f.initNs()));
        }
        Task x = ml.getFirst();
        Task y = fl.getFirst();
        assertEquals(4, x.pids().size(), "multilevel: init, a/1, a/2, a/3");
        assertEquals(2, y.pids().size(), "flat: init and a/3 only");
        PidNamespace yMiddle = y.pidNs().parent();
        assertEquals(0, y.pidIn(yMiddle), "a flat pid is not numbered in the levels between");
        assertTrue(x.pidIn(x.pidNs().parent()) > 0);
        // What ps shows: in the middle level, multilevel lists the nested processes, flat only the level's own init.
        assertEquals(List.of(1, 2, 3), visible(m, x.pidNs().parent().parent()).subList(0, 3));
        assertEquals(List.of(1), visible(f, yMiddle));
    }

    private static List<Integer> visible(PidAllocator pids, PidNamespace ns) {
        List<Integer> l = new ArrayList<>();
        pids.forEachVisible(ns, (t, nr) -> l.add(nr));
        return l;
    }
}
