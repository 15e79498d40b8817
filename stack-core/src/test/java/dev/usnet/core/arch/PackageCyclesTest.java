package dev.usnet.core.arch;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * stack-core's packages form no cycle: each package may use those below it and none above, so a new protocol
 * family or device kind is an addition on top rather than an edit of the packages it uses. Checked on the
 * compiled main classes (imports, fully qualified names, signatures and calls alike).
 */
class PackageCyclesTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.usnet.core");

    @Test
    void noPackageCycleInStackCore() {
        slices().matching("dev.usnet.core.(*)..").should().beFreeOfCycles().check(MAIN);
    }
}
