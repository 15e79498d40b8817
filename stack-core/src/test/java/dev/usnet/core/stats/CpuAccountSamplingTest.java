package dev.usnet.core.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Virtual time's sampled CPU measurement: one timer callback in VIRTUAL_SAMPLE is timed, every one is counted. */
class CpuAccountSamplingTest {
    @Test
    void oneTimerCallbackInTheSampleIsTimedAndStandsForTheOthers() {
        CpuAccount a = new CpuAccount(0);
        int n = 10 * CpuAccount.VIRTUAL_SAMPLE;
        int timed = 0;
        for (int i = 0; i < n; i++) {
            if (a.timeThisTimer()) {
                timed++;
                a.addMeasuredTimer(100, CpuAccount.VIRTUAL_SAMPLE);
            }
        }
        assertEquals(10, timed, "one in " + CpuAccount.VIRTUAL_SAMPLE + " is timed");
        assertEquals(n, a.measuredTimerRuns(), "every callback is counted, timed or not");
        assertEquals(100L * n, a.measuredNanos(), "each timed one stands for the sample's time");
    }

    @Test
    void backlogRunsCountExactlyWhetherTimedOrNot() {
        CpuAccount a = new CpuAccount(0);
        a.addMeasured(50, CpuAccount.VIRTUAL_SAMPLE);
        for (int i = 1; i < CpuAccount.VIRTUAL_SAMPLE; i++) {
            a.ran();
        }
        a.addMeasured(7);
        assertEquals(CpuAccount.VIRTUAL_SAMPLE + 1, a.measuredRuns());
        assertEquals(50L * CpuAccount.VIRTUAL_SAMPLE + 7, a.measuredNanos());
    }
}
