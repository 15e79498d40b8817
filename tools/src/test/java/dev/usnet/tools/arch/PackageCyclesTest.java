package dev.usnet.tools.arch;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.SliceRule;
import dev.usnet.tools.arch.fixture.CycleParent;
import dev.usnet.tools.arch.fixture.sub.CycleChild;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * tools' packages form no cycle: each package (a subpackage counts on its own, so {@code experiment} and
 * {@code experiment.nsid} may not name each other both ways) may use those below it and none above. The entry point
 * {@code dev.usnet.tools.Usnet} names every command; the commands name only the packages below them, such as
 * {@code cli}. Checked on the compiled main classes: imports, fully qualified names, annotations, signatures and
 * calls alike.
 *
 * <p>{@link #ALLOWED} would list, one class dependency each, a dependency allowed to close a cycle while a package
 * is being split; it is empty, and a dependency on it that no longer exists fails
 * {@link #everyAllowedDependencyStillExists} so the list only shrinks.
 */
class PackageCyclesTest {
    private static final String TOOLS = "dev.usnet.tools";

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(TOOLS);

    /** One class depending on another, with why it is still allowed to close a cycle. */
    record Allowed(String origin, String target, String reason) {
        Allowed(String origin, String target, String reason) {
            this.origin = TOOLS + "." + origin;
            this.target = TOOLS + "." + target;
            this.reason = reason;
        }

        /** The class or one of its nested classes (a lambda's or an inner class's dependency is its own). */
        private static boolean isOrNests(JavaClass c, String name) {
            return c.getName().equals(name) || c.getName().startsWith(name + "$");
        }

        boolean matches(Dependency d) {
            return isOrNests(d.getOriginClass(), origin) && isOrNests(d.getTargetClass(), target);
        }

        @Override
        public String toString() {
            return origin + " -> " + target + " (" + reason + ")";
        }
    }

    /** Empty: no dependency may close a cycle. A move that needs one names it here, with its reason. */
    static final List<Allowed> ALLOWED = List.of();

    /** Every package its own slice: the root package, each package and each subpackage. */
    private static final SliceAssignment EACH_PACKAGE = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
            String p = c.getPackageName();
            return p.equals(TOOLS) || p.startsWith(TOOLS + ".") ? SliceIdentifier.of(p) : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "the packages of tools";
        }
    };

    private static SliceRule noCycles(List<Allowed> allowed) {
        SliceRule rule = slices().assignedFrom(EACH_PACKAGE).should().beFreeOfCycles();
        for (Allowed a : allowed) {
            rule = rule.ignoreDependency(named(a.origin), named(a.target));
        }
        return rule;
    }

    private static DescribedPredicate<JavaClass> named(String name) {
        return DescribedPredicate.describe(name, c -> Allowed.isOrNests(c, name));
    }

    @Test
    void noPackageCycleInTools() {
        noCycles(ALLOWED).check(MAIN);
    }

    @Test
    void everyAllowedDependencyStillExists() {
        List<Allowed> gone = new ArrayList<>();
        for (Allowed a : ALLOWED) {
            boolean present = MAIN.stream()
                    .filter(c -> Allowed.isOrNests(c, a.origin))
                    .flatMap(c -> c.getDirectDependenciesFromSelf().stream())
                    .anyMatch(a::matches);
            if (!present) {
                gone.add(a);
            }
        }
        assertEquals(List.of(), gone, "no longer a dependency: remove these from PackageCyclesTest.ALLOWED");
    }

    /** The rule as configured (per-package slices, the allow-list) still sees a subpackage naming its parent. */
    @Test
    void aCycleBetweenAPackageAndItsSubpackageFails() {
        JavaClasses fixture = new ClassFileImporter().importClasses(CycleParent.class, CycleChild.class);
        EvaluationResult result = noCycles(ALLOWED).evaluate(fixture);
        assertTrue(result.hasViolation(), "the fixture's cycle was not reported");
        String report = String.join("\n", result.getFailureReport().getDetails());
        assertTrue(report.contains("dev.usnet.tools.arch.fixture.sub") && report.contains("CycleParent"), report);
    }
}
