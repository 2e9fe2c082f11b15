#include "codegen/llvm/llvm_util.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/Error.h"

namespace hgc {
namespace codegen {
namespace {

TEST(LlvmUtilTest, ErrorToStatus) {
  EXPECT_TRUE(ToStatus(llvm::Error::success()).ok());
  absl::Status s = ToStatus(llvm::make_error<llvm::StringError>(
                                "boom", llvm::inconvertibleErrorCode()),
                            "linking");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), "linking: boom");
  s = ToStatus(llvm::make_error<llvm::StringError>(
                   "gone", llvm::inconvertibleErrorCode()),
               "", absl::StatusCode::kNotFound);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "gone");
}

TEST(LlvmUtilTest, ExpectedToStatusOr) {
  absl::StatusOr<int> ok = ToStatusOr(llvm::Expected<int>(7));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 7);
  absl::StatusOr<int> bad =
      ToStatusOr(llvm::Expected<int>(llvm::make_error<llvm::StringError>(
                     "no", llvm::inconvertibleErrorCode())),
                 "ctx");
  EXPECT_EQ(bad.status().message(), "ctx: no");
}

TEST(LlvmUtilTest, InitializeNativeTargetIsThreadSafeAndIdempotent) {
  std::vector<std::thread> threads;
  std::vector<bool> ok(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&ok, i] { ok[i] = InitializeNativeTarget().ok(); });
  }
  for (std::thread& t : threads) t.join();
  for (bool b : ok) EXPECT_TRUE(b);
  EXPECT_TRUE(InitializeNativeTarget().ok());
}

TEST(LlvmUtilTest, TypeHelpers) {
  llvm::LLVMContext ctx;
  llvm::Type* f32 = llvm::Type::getFloatTy(ctx);
  llvm::Type* v16 = VectorOf(f32, 16);
  EXPECT_EQ(PrintToString(*v16), "<16 x float>");
  EXPECT_EQ(VectorOf(f32, 1), f32);
  EXPECT_EQ(VectorWidth(v16), 16);
  EXPECT_EQ(VectorWidth(f32), 1);
  EXPECT_EQ(ElementType(v16), f32);
  EXPECT_EQ(PrintToString(*IntTypeLike(v16, 8)), "<16 x i8>");
  EXPECT_EQ(IntTypeLike(f32, 32), llvm::Type::getInt32Ty(ctx));
  EXPECT_EQ(PrintToString(*WithElementType(v16, llvm::Type::getHalfTy(ctx))),
            "<16 x half>");
  EXPECT_EQ(PrintToString(*PointerTo(v16)), "<16 x float>*");
  EXPECT_EQ(PrintToString(*F32Const(v16, 0.5)),
            "<16 x float> <float 5.000000e-01, float 5.000000e-01, float "
            "5.000000e-01, float 5.000000e-01, float 5.000000e-01, float "
            "5.000000e-01, float 5.000000e-01, float 5.000000e-01, float "
            "5.000000e-01, float 5.000000e-01, float 5.000000e-01, float "
            "5.000000e-01, float 5.000000e-01, float 5.000000e-01, float "
            "5.000000e-01, float 5.000000e-01>");
  EXPECT_EQ(PrintToString(*IntConst(llvm::Type::getInt8Ty(ctx), -1)), "i8 -1");
  EXPECT_EQ(PrintToString(*IntConst(llvm::Type::getInt8Ty(ctx), 255)), "i8 -1");
}

TEST(LlvmUtilTest, VerifyModuleReportsBrokenIr) {
  llvm::LLVMContext ctx;
  llvm::Module module("broken", ctx);
  llvm::Function* fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
      llvm::Function::ExternalLinkage, "f", &module);
  llvm::BasicBlock::Create(ctx, "entry", fn);  // no terminator
  absl::Status s = VerifyModule(module);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("broken"), absl::string_view::npos) << s;

  llvm::IRBuilder<> b(&fn->getEntryBlock());
  b.CreateRetVoid();
  EXPECT_TRUE(VerifyModule(module).ok());
}

TEST(LlvmUtilTest, HostQueries) {
  EXPECT_FALSE(HostTriple().empty());
  EXPECT_FALSE(HostCpuName().empty());
  llvm::StringMap<bool> features = HostCpuFeatures();
  EXPECT_FALSE(features.empty());
  // Every feature name LLVM reports is a TargetMachine-acceptable one.
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = CreateTargetMachine(
      HostTriple(), HostCpuName(), "", llvm::CodeGenOpt::Default);
  ASSERT_TRUE(tm.ok()) << tm.status();
  EXPECT_EQ((*tm)->getTargetTriple().str(), HostTriple());
  EXPECT_FALSE(
      CreateTargetMachine("nonsense-triple", "", "", llvm::CodeGenOpt::Default)
          .ok());
}

TEST(LlvmUtilTest, CvtNePs2Bf16Shapes) {
  llvm::LLVMContext ctx;
  llvm::Module module("m", ctx);
  llvm::Type* f32 = llvm::Type::getFloatTy(ctx);
  llvm::Function* fn = llvm::Function::Create(
      llvm::FunctionType::get(
          llvm::Type::getVoidTy(ctx),
          {VectorOf(f32, 16), VectorOf(f32, 8), VectorOf(f32, 4)}, false),
      llvm::Function::ExternalLinkage, "f", &module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value* r16 = EmitCvtNePs2Bf16(b, fn->getArg(0));
  llvm::Value* r8 = EmitCvtNePs2Bf16(b, fn->getArg(1));
  ASSERT_NE(r16, nullptr);
  ASSERT_NE(r8, nullptr);
  EXPECT_EQ(PrintToString(*r16->getType()), "<16 x i16>");
  EXPECT_EQ(PrintToString(*r8->getType()), "<8 x i16>");
  EXPECT_EQ(EmitCvtNePs2Bf16(b, fn->getArg(2)), nullptr);
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
